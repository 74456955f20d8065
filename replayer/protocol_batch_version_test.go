package replayer

import (
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

// A server batch recorded in a session whose initialize answer negotiated
// 2025-06-18 (batches are gone from that version on: a cassette edited,
// or put together from others) goes out on stdio one member a line, the
// live token and id in place; the same recording of 2025-03-26 joins them
// (TestServerBatchesReplayAsOneLine).
func TestServerBatchesApartOnStdioFrom20250618(t *testing.T) {
	data, err := cassettes.Encode(serverBatchCassette(t))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "2025-03-26", "2025-06-18")
	if strings.Count(text, `"batch"`) != 4 {
		t.Fatalf("want 4 batch members in the cassette:\n%s", text)
	}
	w, _ := serveCassette(t, text, nil)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if got := recvLine(t, w); !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %s", got)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"work","_meta":{"progressToken":"live"}}}`)
	for _, want := range []string{`"progressToken":"live"`, `"id":"a"`, `"one"`, `"two"`} {
		got := recvLine(t, w)
		if strings.HasPrefix(got, "[") || !strings.Contains(got, want) {
			t.Fatalf("want a line of its own with %s, got %s", want, got)
		}
	}
}
