package replayer

import (
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// A recorded SSE event id with a line break or a NUL (a hand-edited
// cassette) must not reach the wire as written: "e1\nevent: x" would end
// the id line and inject fields or a whole event into the replayed stream.
// Loading refuses the cassette, naming the interaction; a cassette built
// in Go, which no load checked, has the event sent without the id.
func TestRecordedEventIDCannotInject(t *testing.T) {
	injected := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"injected"}}`
	for _, tc := range []struct{ name, id string }{
		{"LF", "e1\nevent: message\ndata: " + injected + "\n\nid: e2"},
		{"CR", "e1\revent: message\rdata: " + injected + "\r\rid: e2"},
		{"CRLF", "e1\r\n\r\ndata: " + injected},
		{"NUL", "e1\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := strings.Replace(call(3, "echo", `{}`, text("hi")), `"response"`, `"http":{"status":200,"form":"sse","eventIds":["e1"]},"response"`, 1)
			quoted, _ := json.Marshal(tc.id)
			bad := strings.Replace(good, `"eventIds":["e1"]`, `"eventIds":[`+string(quoted)+`]`, 1)

			_, err := cassettes.Parse("edited.json", []byte(cassette(initialize, bad)))
			if !errors.Is(err, cassettes.ErrInvalid) || !strings.Contains(err.Error(), "interaction 2: http.eventIds[0]") {
				t.Errorf("loading a cassette whose event id holds %s: %v, want ErrInvalid naming interaction 2's http.eventIds[0]", tc.name, err)
			}

			// The same id in a cassette built in Go, replayed through the
			// HTTP handler.
			c, err := cassettes.Parse("test.json", []byte(cassette(initialize, good)))
			if err != nil {
				t.Fatal(err)
			}
			c.Interactions[1].HTTP.EventIDs[0] = tc.id
			e, err := New(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			h := e.Handler(nil)
			srv := httptest.NewServer(h)
			t.Cleanup(func() {
				h.Close()
				srv.Close()
			})
			u := srv.URL + "/mcp"
			sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
			got := do(t, "POST", u, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, map[string]string{"Mcp-Session-Id": sid})
			r := jsonrpc.NewSSEReader(strings.NewReader(got.body), 1<<20)
			var evs []jsonrpc.Event
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("reading the stream %q: %v", got.body, err)
				}
				evs = append(evs, ev)
			}
			if len(evs) != 1 || !strings.Contains(string(evs[0].Data), `"id":4`) || evs[0].ID != "" {
				t.Errorf("the stream %q holds %d events (%+v), want one: the response, with no id", got.body, len(evs), evs)
			}
		})
	}
}
