package replayer_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/replayer"
)

func logCassette(caps string) string {
	return `{"version":1,"meta":{},"interactions":[
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"s","version":"1"}}}}},
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log","arguments":{}}},
 "exchange":[
  {"from":"server","atMs":0,"message":{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"a debug line"}}},
  {"from":"server","atMs":0,"message":{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":"a warning"}}}],
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"logged"}]}}}}
]}`
}

// logging/setLevel is answered {} when the recorded server declared
// logging although the cassette lacks it; replayed notifications/message
// below the level are dropped; an unknown level is -32602; a server that
// did not declare logging never answered setLevel.
func TestLoggingLevel(t *testing.T) {
	c, err := cassettes.Parse("log.json", []byte(logCassette(`{"logging":{},"tools":{}}`)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := serveLines(t, e)
	handle := func(line string) string { return s.call(line) }
	call := `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"log","arguments":{}}}`
	if got := handle(call); !strings.Contains(got, "a debug line") || !strings.Contains(got, "a warning") {
		t.Errorf("without a level, every message: %s", got)
	}
	if got := handle(`{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"warning"}}`); got != `{"jsonrpc":"2.0","id":"l","result":{}}` {
		t.Errorf("setLevel: %s", got)
	}
	if got := handle(call); strings.Contains(got, "a debug line") || !strings.Contains(got, "a warning") || !strings.Contains(got, "logged") {
		t.Errorf("at warning: %s", got)
	}
	if got := handle(`{"jsonrpc":"2.0","id":"x","method":"logging/setLevel","params":{"level":"loud"}}`); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("unknown level: %s", got)
	}

	c, err = cassettes.Parse("nolog.json", []byte(logCassette(`{"tools":{}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if e, err = replayer.New(c, nil); err != nil {
		t.Fatal(err)
	}
	s = serveLines(t, e)
	if got := handle(`{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"warning"}}`); !strings.Contains(got, `"code":-32601`) {
		t.Errorf("setLevel to a server without logging: %s", got)
	}
}

// Recorded resources/list and prompts/list without pages, re-paged by 1:
// a client following nextCursor sees every item once, in order.
func TestRepagedResourcesAndPrompts(t *testing.T) {
	c, err := cassettes.Parse("lists.json", []byte(`{"version":1,"meta":{},"interactions":[
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}},
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///a","name":"a"},{"uri":"file:///b","name":"b"},{"uri":"file:///c","name":"c"}]}}}},
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{}},
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":2,"result":{"prompts":[{"name":"p1"},{"name":"p2"}]}}}}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := replayer.New(c, &replayer.Options{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := serveLines(t, e)
	for method, want := range map[string]string{"resources/list": "file:///a,file:///b,file:///c", "prompts/list": "p1,p2"} {
		var got []string
		cursor := ""
		for n := 0; n < 10; n++ {
			params := `{}`
			if cursor != "" {
				params = `{"cursor":` + string(mustQuote(cursor)) + `}`
			}
			answer, _ := jsonrpc.Parse([]byte(s.call(`{"jsonrpc":"2.0","id":9,"method":"` + method + `","params":` + params + `}`)))
			if answer == nil || answer.Result == nil {
				t.Fatalf("%s: %v", method, answer)
			}
			var r struct {
				Resources  []struct{ URI string }  `json:"resources"`
				Prompts    []struct{ Name string } `json:"prompts"`
				NextCursor string                  `json:"nextCursor"`
			}
			json.Unmarshal(answer.Result, &r)
			if len(r.Resources)+len(r.Prompts) != 1 {
				t.Errorf("%s: page of %d", method, len(r.Resources)+len(r.Prompts))
			}
			for _, x := range r.Resources {
				got = append(got, x.URI)
			}
			for _, x := range r.Prompts {
				got = append(got, x.Name)
			}
			if cursor = r.NextCursor; cursor == "" {
				break
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: %s, want %s", method, strings.Join(got, ","), want)
		}
	}
}

func mustQuote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
