package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNotificationsMatchTheSchemas: NotificationIn says of each version and
// side what the ClientNotification and ServerNotification unions of that
// version's schema.json (the specification beside the project, ../shared/
// mcp-spec) hold: no more, no less.
func TestNotificationsMatchTheSchemas(t *testing.T) {
	spec := filepath.Join("..", "..", "..", "shared", "mcp-spec")
	if _, err := os.Stat(spec); err != nil {
		t.Skipf("the specification is not beside the project: %v", err)
	}
	for _, v := range Versions() {
		data, err := os.ReadFile(filepath.Join(spec, v, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Defs        map[string]json.RawMessage `json:"$defs"`
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		defs := s.Defs
		if defs == nil {
			defs = s.Definitions
		}
		for _, union := range []string{"ClientNotification", "ServerNotification"} {
			var want []string
			var walk func(raw json.RawMessage)
			walk = func(raw json.RawMessage) {
				var d struct {
					Ref        string            `json:"$ref"`
					AnyOf      []json.RawMessage `json:"anyOf"`
					Properties struct {
						Method struct {
							Const string `json:"const"`
						} `json:"method"`
					} `json:"properties"`
				}
				json.Unmarshal(raw, &d)
				switch {
				case d.Ref != "":
					walk(defs[d.Ref[strings.LastIndex(d.Ref, "/")+1:]])
				case d.AnyOf != nil:
					for _, a := range d.AnyOf {
						walk(a)
					}
				case d.Properties.Method.Const != "":
					want = append(want, d.Properties.Method.Const)
				}
			}
			walk(defs[union])
			if len(want) == 0 {
				t.Fatalf("%s: no %s in schema.json", v, union)
			}
			slices.Sort(want)
			var got []string
			set := serverNotifications
			if union == "ClientNotification" {
				set = clientNotifications
			}
			for m := range set {
				if NotificationIn(v, union == "ClientNotification", m) {
					got = append(got, m)
				}
			}
			slices.Sort(got)
			if !slices.Equal(want, got) {
				t.Errorf("%s %s:\nschema: %v\nmcp:    %v", v, union, want, got)
			}
		}
	}
	if !NotificationIn(Version20260728, false, "acme/tick") || NotificationIn(Version20251125, false, "notifications/made_up") {
		t.Errorf("methods outside notifications/ are not MCP's to judge; a made-up notifications/ one is no version's")
	}
}
