package replayer_test

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// A 2025-03-26 server that answered a call with its progress and the
// result in one batch line, and then sent two notifications as one batch,
// is replayed the same way on stdio: the cassette marks the batch members,
// and the replay joins them again.
func TestServerBatchesReplayAsOneLine(t *testing.T) {
	rec, err := recorder.New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	observe := func(from cassettes.Direction, line string) { rec.Observe(from, []byte(line), now) }
	observe(cassettes.FromClient, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	observe(cassettes.FromServer, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"s","version":"1"}}}`)
	observe(cassettes.FromClient, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	observe(cassettes.FromClient, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`)
	observe(cassettes.FromServer, `[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":1}},{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}]`)
	observe(cassettes.FromServer, `[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"two"}}]`)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	c := rec.Cassette()
	// The cassette keeps the batch membership, and loads again.
	data, err := cassettes.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), `"batch"`) != 4 {
		t.Errorf("want 4 batch members in the cassette:\n%s", data)
	}
	if c, err = cassettes.Parse("batch.json", data); err != nil {
		t.Fatal(err)
	}

	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	clientR, clientW, serverR, serverW := pipePair()
	go func() { e.Serve(ctx, serverR, serverW); serverW.Close() }()
	defer clientW.Close()
	lines := bufio.NewScanner(clientR)
	next := func() string {
		if !lines.Scan() {
			t.Fatal("the replay ended")
		}
		return lines.Text()
	}
	fmt.Fprintln(clientW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	next()
	fmt.Fprintln(clientW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(clientW, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"work","_meta":{"progressToken":"live"}}}`)
	got := next()
	if !strings.HasPrefix(got, "[") || !strings.Contains(got, `"progressToken":"live"`) || !strings.Contains(got, `"id":"a"`) {
		t.Errorf("progress and answer: want one batch line with the live token and id, got %s", got)
	}
	got = next()
	if !strings.HasPrefix(got, "[") || !strings.Contains(got, `"one"`) || !strings.Contains(got, `"two"`) {
		t.Errorf("notifications: want one batch line, got %s", got)
	}
}
