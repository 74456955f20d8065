package recorder

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestGrouping feeds the recorder a session as a tap would see it and checks
// how messages are grouped into interactions.
func TestGrouping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec, err := New(path, &Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Time { return clock.Add(time.Duration(ms) * time.Millisecond) }
	c, s := cassettes.FromClient, cassettes.FromServer
	steps := []struct {
		from cassettes.Direction
		msg  string
	}{
		{c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{s, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`},
		{c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"p"}}}`},
		{c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`},
		{s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`},
		{s, `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`},
		{c, `{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}`},
		{s, `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`},
		{s, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		{s, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{s, `not json at all`},
		{c, `[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`},
		{s, `{"jsonrpc":"2.0","id":99,"result":{}}`},
		{c, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"crash"}}`},
	}
	for i, st := range steps {
		rec.Observe(st.from, []byte(st.msg), at(i))
	}
	got := rec.Cassette()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, in := range got.Interactions {
		k := string(in.From) + ":" + in.Kind()
		if in.Request != nil {
			var m struct {
				Method string `json:"method"`
			}
			json.Unmarshal(in.Request, &m)
			k += ":" + m.Method
			if in.Response != nil {
				k += "+response"
			}
			if len(in.Exchange) > 0 {
				k += "+" + itoa(len(in.Exchange))
			}
		}
		kinds = append(kinds, k)
	}
	want := []string{
		"client:request:initialize+response",
		"client:notification",
		"client:request:tools/call+response+1", // a: its progress, by token
		"client:request:tools/call+response+2", // b, the latest in flight: roots/list and the reply
		"server:notification",                  // list_changed stands alone
		"server:raw",
		"client:request:ping",
		"client:request:ping",
		"server:raw", // a response to nothing
		"client:request:tools/call",
	}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("interactions:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
	if got.Interactions[6].Batch == 0 || got.Interactions[6].Batch != got.Interactions[7].Batch {
		t.Errorf("batch members not numbered alike: %d %d", got.Interactions[6].Batch, got.Interactions[7].Batch)
	}
	if got.Interactions[2].AtMs != 3 {
		t.Errorf("time offset %v, want 3", got.Interactions[2].AtMs)
	}
	loaded, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Interactions) != len(want) {
		t.Errorf("saved %d interactions, want %d", len(loaded.Interactions), len(want))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFlushWhileRecording: a completed interaction reaches the file without
// Close.
func TestFlushWhileRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, &Options{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if c, err := cassettes.Load(path); err != nil || len(c.Interactions) != 0 {
		t.Fatalf("the empty cassette is not on disk at once: %v", err)
	}
	now := time.Now()
	rec.Observe(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), now)
	rec.Observe(cassettes.FromServer, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), now)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := cassettes.Load(path)
		if err != nil {
			t.Fatalf("a reader saw a broken cassette: %v", err)
		}
		if len(c.Interactions) == 1 && c.Interactions[0].Response != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the completed interaction was not written within 10s (the flush interval is an hour)")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
