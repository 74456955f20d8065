package mcp

import (
	"slices"
	"testing"
)

func TestVersions(t *testing.T) {
	v := Versions()
	if !slices.IsSorted(v) {
		t.Errorf("Versions() = %v, not oldest first", v)
	}
	v[0] = "changed"
	if Versions()[0] == "changed" {
		t.Error("Versions() returned a slice that the next call shares")
	}
	for _, v := range Versions() {
		if !Known(v) {
			t.Errorf("Known(%q) = false", v)
		}
	}
	for _, v := range []string{"", "2025-11-26", "2026-07-28 "} {
		if Known(v) {
			t.Errorf("Known(%q) = true", v)
		}
	}
	if got := Versions()[len(Versions())-2]; got != LatestStateful {
		t.Errorf("LatestStateful = %q, want the one before the stateless era, %q", LatestStateful, got)
	}
}

func TestEras(t *testing.T) {
	tests := []struct {
		v                                              string
		stateless, batches, streamableBatches, toolErr bool
	}{
		{"", false, true, true, false},
		{Version20241105, false, true, false, false},
		{Version20250326, false, true, true, false},
		{Version20250618, false, false, false, false},
		{Version20251125, false, false, false, true},
		{Version20260728, true, false, false, true},
	}
	for _, tt := range tests {
		if got := Stateless(tt.v); got != tt.stateless {
			t.Errorf("Stateless(%q) = %v", tt.v, got)
		}
		if got := Batches(tt.v); got != tt.batches {
			t.Errorf("Batches(%q) = %v", tt.v, got)
		}
		if got := StreamableBatches(tt.v); got != tt.streamableBatches {
			t.Errorf("StreamableBatches(%q) = %v", tt.v, got)
		}
		if got := ToolInputErrors(tt.v); got != tt.toolErr {
			t.Errorf("ToolInputErrors(%q) = %v", tt.v, got)
		}
	}
}

func TestLists(t *testing.T) {
	for _, l := range Lists() {
		got, ok := ListOf(l.Method)
		if !ok || got != l {
			t.Errorf("ListOf(%q) = %+v, %v, want %+v", l.Method, got, ok, l)
		}
		if ListKind(l.Method) != l.Kind {
			t.Errorf("ListKind(%q) = %q, want %q", l.Method, ListKind(l.Method), l.Kind)
		}
		changed := "notifications/" + l.Kind + "/list_changed"
		if !ListChanged(changed) || ListKind(changed) != l.Kind || !SubscriptionNotification(changed) {
			t.Errorf("%s: not a list change of kind %q", changed, l.Kind)
		}
	}
	for _, m := range []string{"tools/call", "notifications/roots/list_changed", "notifications/progress", ""} {
		if _, ok := ListOf(m); ok || ListChanged(m) || SubscriptionNotification(m) {
			t.Errorf("%q taken for a list or a state change", m)
		}
	}
	if !SubscriptionNotification("notifications/resources/updated") {
		t.Error("notifications/resources/updated is not a subscription notification")
	}
}

func TestMethodSets(t *testing.T) {
	for m, want := range map[string]bool{"initialize": true, "server/discover": true, "notifications/initialized": false, "ping": false} {
		if Handshake(m) != want {
			t.Errorf("Handshake(%q) = %v", m, !want)
		}
	}
	for m, want := range map[string]bool{"tasks/get": true, "tasks/result": true, "tasks/cancel": true, "tasks/list": false} {
		if TaskMethod(m) != want {
			t.Errorf("TaskMethod(%q) = %v", m, !want)
		}
	}
}

func TestParams(t *testing.T) {
	p := []byte(`{"name":"echo","cursor":"c2","requestState":"s1","_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	if got := MetaVersion(p); got != Version20260728 {
		t.Errorf("MetaVersion = %q", got)
	}
	if got := string(ProgressToken(p)); got != "7" {
		t.Errorf("ProgressToken = %s", got)
	}
	if got, ok := ToolName(p); got != "echo" || !ok {
		t.Errorf("ToolName = %q, %v", got, ok)
	}
	if got := Cursor(p); got != "c2" {
		t.Errorf("Cursor = %q", got)
	}
	if got, retry := RequestState(p); got != "s1" || !retry {
		t.Errorf("RequestState = %q, %v", got, retry)
	}
	if _, retry := RequestState([]byte(`{"inputResponses":{"a":{}}}`)); !retry {
		t.Error("a request with inputResponses is not a retry")
	}
	empty := []byte(`{"progressToken":1,"name":3}`) // not in _meta; not a string
	if MetaVersion(empty) != "" || ProgressToken(empty) != nil || Cursor(empty) != "" {
		t.Errorf("accessors read what is not there in %s", empty)
	}
	if _, ok := ToolName(empty); ok {
		t.Errorf("ToolName(%s) reports a string", empty)
	}
	if _, retry := RequestState(empty); retry {
		t.Errorf("RequestState(%s) reports a retry", empty)
	}
}

func TestAccessorsAllocates(t *testing.T) {
	p := []byte(`{"name":"echo","arguments":{"a":1}}`)
	if n := testing.AllocsPerRun(100, func() {
		MetaVersion(p)
		ProgressToken(p)
		RequestState(p)
		ListKind("tools/call")
		SubscriptionNotification("notifications/progress")
	}); n != 0 {
		t.Errorf("the accessors allocate %v times for a request without their members", n)
	}
}
