package replayer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
)

// serverBatchCassette records a 2025-03-26 server that answered a call
// with its progress and the result in one batch line, then sent two log
// notifications as one batch.
func serverBatchCassette(t *testing.T) *cassettes.Cassette {
	t.Helper()
	rec, err := recorder.New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, x := range []struct {
		from cassettes.Direction
		line string
	}{
		{cassettes.FromClient, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{cassettes.FromServer, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"s","version":"1"}}}`},
		{cassettes.FromClient, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{cassettes.FromClient, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`},
		{cassettes.FromServer, `[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":1}},{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}]`},
		{cassettes.FromServer, `[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"two"}}]`},
	} {
		rec.Observe(x.from, []byte(x.line), now)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.Cassette()
}

// Over Streamable HTTP, a 2025-03-26 session gets each recorded server
// batch as one SSE event whose data is the JSON-RPC array, as that
// version's transport allows: the call's progress and answer on the POST's
// stream (live token, live id), the two notifications that followed on the
// GET stream. A session of 2025-06-18 (no batches) gets them one event
// each.
func TestServerBatchesOverStreamableHTTP(t *testing.T) {
	data, err := cassettes.Encode(serverBatchCassette(t))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serveHTTP(t, string(data), nil)
	u := srv.URL + "/mcp"
	for _, version := range []string{"2025-03-26", "2025-06-18"} {
		init := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
		sid := init.header.Get("Mcp-Session-Id")
		hd := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}
		do(t, "POST", u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hd)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		get, next := getStream(t, ctx, u, sid, "")
		x := do(t, "POST", u, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"work","_meta":{"progressToken":"live"}}}`, hd)
		ev := events(x.body)
		var later []string
		if version == "2025-03-26" {
			if len(ev) != 1 || !strings.HasPrefix(ev[0], "[") || !strings.Contains(ev[0], `"progressToken":"live"`) || !strings.Contains(ev[0], `"id":"a"`) {
				t.Errorf("%s: the call's events %q, want one batch with the live token and id", version, ev)
			}
			later = append(later, next().data)
			if !strings.HasPrefix(later[0], "[") || !strings.Contains(later[0], `"one"`) || !strings.Contains(later[0], `"two"`) {
				t.Errorf("%s: GET stream event %q, want the two notifications in one batch", version, later[0])
			}
		} else {
			if len(ev) != 2 || strings.HasPrefix(ev[0], "[") || !strings.Contains(ev[0], `"progressToken":"live"`) || !strings.Contains(ev[1], `"id":"a"`) {
				t.Errorf("%s: the call's events %q, want the progress and the answer apart", version, ev)
			}
			later = append(later, next().data, next().data)
			if strings.HasPrefix(later[0], "[") || !strings.Contains(later[0], `"one"`) || !strings.Contains(later[1], `"two"`) {
				t.Errorf("%s: GET stream events %q, want the two notifications apart", version, later)
			}
		}
		get.Body.Close()
		cancel()
	}
}

// The same recording replayed on stdio: the cassette marks the batch
// members (and loads again), and the replay joins them into one line, with
// the live token and id.
func TestServerBatchesReplayAsOneLine(t *testing.T) {
	data, err := cassettes.Encode(serverBatchCassette(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), `"batch"`) != 4 {
		t.Errorf("want 4 batch members in the cassette:\n%s", data)
	}
	w, _ := serveCassette(t, string(data), nil)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	recvLine(t, w)
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"work","_meta":{"progressToken":"live"}}}`)
	got := recvLine(t, w)
	if !strings.HasPrefix(got, "[") || !strings.Contains(got, `"progressToken":"live"`) || !strings.Contains(got, `"id":"a"`) {
		t.Errorf("progress and answer: want one batch line with the live token and id, got %s", got)
	}
	got = recvLine(t, w)
	if !strings.HasPrefix(got, "[") || !strings.Contains(got, `"one"`) || !strings.Contains(got, `"two"`) {
		t.Errorf("notifications: want one batch line, got %s", got)
	}
}
