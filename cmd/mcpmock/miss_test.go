package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

// searchCassette writes a cassette of n recorded calls of the tool
// "search", each with small arguments of its own.
func searchCassette(t *testing.T, n int) string {
	t.Helper()
	c := cassettes.New()
	for i := range n {
		c.Interactions = append(c.Interactions, cassettes.Interaction{
			From:    cassettes.FromClient,
			Request: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"query %d","limit":10}}}`, i+1, i),
			Response: &cassettes.Message{From: cassettes.FromServer,
				Message: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"result %d"}]}}`, i+1, i)},
		})
	}
	path := filepath.Join(t.TempDir(), "search.json")
	if err := cassettes.Save(path, c); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayMissDoesNotHoldThePing: on stdio, a 1 MB call that matches
// none of 1,000 recorded calls does not keep the next request waiting: a
// ping sent right after it is answered first, and the miss is then
// answered with a bounded explanation of the closest recorded call.
func TestReplayMissDoesNotHoldThePing(t *testing.T) {
	p := start(t, "replay", "-c", searchCassette(t, 1000))
	var docs []string
	for i := 0; len(docs)*90 < 1<<20; i++ {
		docs = append(docs, fmt.Sprintf(`{"id":%d,"title":"document %d","body":"the quick brown fox jumps over the lazy dog %d"}`, i, i, i))
	}
	p.send(t, `{"jsonrpc":"2.0","id":"miss","method":"tools/call","params":{"name":"search","arguments":{"query":"query 3","limit":10,"documents":[`+strings.Join(docs, ",")+`]}}}`)
	p.send(t, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if first := p.recv(t); first["id"] != "ping" {
		t.Fatalf("first answer %.300v, want the ping's: the miss held the connection", first)
	}
	miss := p.recv(t)
	if miss["id"] != "miss" || errorCode(t, miss) != -32010 {
		t.Fatalf("second answer %.300v, want the miss's -32010", miss)
	}
	e := miss["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if !strings.Contains(msg, `tools/call of tool "search"`) || !strings.Contains(msg, "closest is interaction 4: arguments.documents: not recorded") {
		t.Errorf("the message does not name the tool, the closest call and the difference: %.400s", msg)
	}
	if b, _ := json.Marshal(miss); len(b) > 64<<10 {
		t.Errorf("the miss's answer is %d bytes, want a bounded explanation", len(b))
	}
}

// TestReplayInvalidRequestKeepsItsID: on stdio, an invalid request whose id
// can be read is answered -32600 under that id, as over HTTP.
func TestReplayInvalidRequestKeepsItsID(t *testing.T) {
	p := start(t, "replay", "-c", searchCassette(t, 1))
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":5}`,
		`{"jsonrpc":"1.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7}`,
	} {
		p.send(t, line)
		if m := p.recv(t); m["id"] != float64(7) || errorCode(t, m) != -32600 {
			t.Errorf("%s: answered %v, want -32600 with id 7", line, m)
		}
	}
}
