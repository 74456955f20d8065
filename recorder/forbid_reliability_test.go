package recorder

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

func TestForbidWriterAcrossWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		bad    bool
	}{
		{"absent", []string{`{"a":"b"}`, `{"c":"d"}`}, false},
		{"in one write", []string{`{"a":"xx-hunter2-xx"}`}, true},
		{"split over writes", []string{`{"a":"hun`, `te`, `r2"}`}, true},
		{"escaped in JSON", []string{`{"a":"q\"uo\\te"}`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			fw := newForbidWriter(&out, []Forbidden{{Name: "$PW", Value: "hunter2"}, {Name: "--forbid #1", Value: `q"uo\te`}})
			var err error
			for _, c := range tc.chunks {
				if _, err = fw.Write([]byte(c)); err != nil {
					break
				}
			}
			if got := errors.Is(err, ErrForbiddenValue); got != tc.bad {
				t.Fatalf("error %v, want forbidden=%v", err, tc.bad)
			}
			if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "uo")) {
				t.Errorf("the error shows the value: %v", err)
			}
			if strings.Contains(out.String(), "hunter2") {
				t.Errorf("the value went through in whole: %q", out.String())
			}
		})
	}
}

func TestForbidRefusesSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, &Options{Forbid: []Forbidden{{Name: "$MY_TOKEN", Value: "plain-but-secret-value"}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec.Observe(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"note":"ok"}}}`), now)
	rec.Observe(cassettes.FromServer, []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`), now)
	rec.Sync()
	rec.Observe(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{"note":"plain-but-secret-value"}}}`), now)
	rec.Observe(cassettes.FromServer, []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`), now)
	err = rec.Close()
	if !errors.Is(err, ErrForbiddenValue) || !strings.Contains(err.Error(), "$MY_TOKEN") {
		t.Fatalf("Close = %v, want ErrForbiddenValue naming $MY_TOKEN", err)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte("plain-but-secret-value")) {
		t.Fatal("the forbidden value is in the cassette")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != "c.json" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
