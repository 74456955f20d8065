package recorder

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// unit is one observed unit of a contract test: "> " a client message,
// "< " a server message, "end" the end of the exchange; on HTTP with its
// exchange, stream and request headers.
type unit struct {
	line string
	ex   uint64
	// hdr are the client request's headers ("" values are left out); sid
	// on a server unit of no message is the session id a response gives.
	hdr    map[string]string
	stream string
	sid    string
	// bridge says the client message came to a stdio bridge (headers,
	// no note).
	bridge bool
}

// viewer is a livelog.Viewer that keeps the records.
type viewer struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (v *viewer) TakesMessages() bool                      { return true }
func (v *viewer) Enabled(context.Context, slog.Level) bool { return true }
func (v *viewer) Handle(_ context.Context, r slog.Record) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.recs = append(v.recs, r.Clone())
	return nil
}
func (v *viewer) WithAttrs([]slog.Attr) slog.Handler { return v }
func (v *viewer) WithGroup(string) slog.Handler      { return v }

// warnings records the units and returns the contract warnings and the
// live log's warning records.
func warnings(t *testing.T, units []unit) ([]ContractWarning, []slog.Record) {
	t.Helper()
	v := &viewer{}
	rec, err := New("", &Options{Logger: slog.New(v)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, u := range units {
		switch {
		case u.line == "end":
			rec.endExchange(u.ex)
		case strings.HasPrefix(u.line, "> "):
			data := []byte(u.line[2:])
			h := http.Header{}
			for k, v := range u.hdr {
				h.Set(k, v)
			}
			switch {
			case u.bridge:
				rec.observeHeader(data, now, h)
			case u.ex != 0:
				rec.ObserveHTTP(cassettes.FromClient, data, now, HTTPNote{Exchange: u.ex, reqHeader: h, reqURL: &url.URL{Path: "/mcp"}})
			default:
				rec.Observe(cassettes.FromClient, data, now)
			}
		case strings.HasPrefix(u.line, "< "):
			data := []byte(u.line[2:])
			if u.ex != 0 || u.stream != "" {
				rec.ObserveHTTP(cassettes.FromServer, data, now, HTTPNote{Exchange: u.ex, Stream: u.stream})
			} else {
				rec.Observe(cassettes.FromServer, data, now)
			}
		case u.line == "<headers":
			h := http.Header{}
			if u.sid != "" {
				h.Set("Mcp-Session-Id", u.sid)
			}
			rec.ObserveHTTPResponse(HTTPNote{Exchange: u.ex, Status: 200, Form: "sse", respHeader: h}, now)
		default:
			t.Fatalf("bad unit %q", u.line)
		}
	}
	ws, n := rec.ContractWarnings()
	if n != len(ws) {
		t.Errorf("%d warnings counted, %d kept", n, len(ws))
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if want := contractCount(n); !strings.Contains(rec.Summary(), want) {
		t.Errorf("summary %q does not say %q", rec.Summary(), want)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []slog.Record
	for _, r := range v.recs {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "kind" && a.Value.String() == livelog.KindWarning {
				out = append(out, r)
			}
			return true
		})
	}
	return ws, out
}

// c and s are stdio units; the h* helpers HTTP ones.
func c(line string) unit { return unit{line: "> " + line} }
func s(line string) unit { return unit{line: "< " + line} }
func hc(ex uint64, hdr map[string]string, line string) unit {
	return unit{line: "> " + line, ex: ex, hdr: hdr}
}
func hs(ex uint64, line string) unit { return unit{line: "< " + line, ex: ex} }

const (
	meta26   = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	v26      = "2026-07-28"
	init0618 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	init1125 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
)

func initResult(v string) string {
	return `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"` + v + `","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
}

func h26(method, name string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": v26, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// TestContractChecks: each check, in both eras, over stdio and HTTP,
// batches included: the warnings it gives (kind, message, detail) and the
// clean cases that must give none.
func TestContractChecks(t *testing.T) {
	call := func(id, tool string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta26 + `,"name":"` + tool + `","arguments":{}}}`
	}
	ok := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"ok"}]}}`
	}
	inputRequired := func(id, state string) string {
		st := ""
		if state != "" {
			st = `,"requestState":` + state
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"mode":"form","message":"?","requestedSchema":{"type":"object"}}}}` + st + `}}`
	}
	retry := func(id, tool, state string) string {
		st := ""
		if state != "" {
			st = `,"requestState":` + state
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta26 + `,"name":"` + tool + `","arguments":{},"inputResponses":{"q":{"action":"accept","content":{}}}` + st + `}}`
	}
	toolsList := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"count","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}},{"name":"free","inputSchema":{"type":"object"}}]}}`
	structured := func(id, sc string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":` + sc + `}}`
	}
	for _, tc := range []struct {
		name  string
		units []unit
		want  []string // "kind message detail-fragment"
	}{
		// headers
		{"2026 headers agree", []unit{hc(1, h26("tools/call", "echo"), call("1", "echo")), hs(1, ok("1"))}, nil},
		{"2026 Mcp-Name base64 agrees", []unit{hc(1, h26("tools/call", "=?base64?w6ljaG8=?="), call("1", "écho")), hs(1, ok("1"))}, nil},
		{"2026 wrong Mcp-Name", []unit{hc(1, h26("tools/call", "other"), call("1", "echo")), hs(1, ok("1"))},
			[]string{`headers 1 the Mcp-Name header says "other" but the body's params.name is "echo"`}},
		{"2026 wrong Mcp-Method", []unit{hc(1, h26("tools/list", "echo"), call("1", "echo")), hs(1, ok("1"))},
			[]string{`headers 1 the Mcp-Method header says "tools/list" but the body's method is "tools/call"`}},
		{"2026 Mcp-Name not encoded", []unit{hc(1, h26("tools/call", "écho"), call("1", "écho")), hs(1, ok("1"))},
			[]string{`headers 1 is not a valid header value`}},
		{"2026 headers missing", []unit{hc(1, map[string]string{"Mcp-Protocol-Version": v26}, call("1", "echo")), hs(1, ok("1"))},
			[]string{"headers 1 has no Mcp-Method header", "headers 1 has no Mcp-Name header"}},
		{"2026 resources/read uri", []unit{hc(1, h26("resources/read", "file:///b"), `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{`+meta26+`,"uri":"file:///a"}}`)},
			[]string{`headers 1 the Mcp-Name header says "file:///b" but the body's params.uri is "file:///a"`}},
		{"2026 notification without headers", []unit{hc(1, map[string]string{"Mcp-Protocol-Version": v26}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)}, nil},
		{"2025 without headers", []unit{hc(1, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`), hs(1, ok("1"))}, nil},
		{"2025 header that disagrees", []unit{hc(1, map[string]string{"Mcp-Protocol-Version": "2025-06-18", "Mcp-Method": "ping"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`), hs(1, ok("1"))},
			[]string{`headers 1 the Mcp-Method header says "ping"`}},
		{"2025-03-26 batch is not held to one header", []unit{hc(1, map[string]string{"Mcp-Method": "ping"}, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`), hs(1, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]`)}, nil},
		{"stdio bridge headers", []unit{{line: "> " + call("1", "echo"), hdr: h26("tools/call", "other"), bridge: true}, s(ok("1"))},
			[]string{`headers 1 the Mcp-Name header says "other"`}},
		{"stdio has no headers", []unit{c(call("1", "echo")), s(ok("1"))}, nil},

		// requestState
		{"requestState echoed", []unit{c(call("1", "ask")), s(inputRequired("1", `"abc"`)), c(retry("2", "ask", `"abc"`)), s(ok("2"))}, nil},
		{"requestState echoed, JSON-equal", []unit{c(call("1", "ask")), s(inputRequired("1", `"abc"`)), c(retry("2", "ask", `"a\u0062c"`)), s(ok("2"))}, nil},
		{"requestState changed", []unit{c(call("1", "ask")), s(inputRequired("1", `"abc"`)), c(retry("2", "ask", `"abd"`)), s(ok("2"))},
			[]string{`requestState 3 the requestState of tools/call "ask" was changed: the server sent "abc", the client echoed "abd"`}},
		{"requestState dropped", []unit{c(call("1", "ask")), s(inputRequired("1", `"abc"`)), c(retry("2", "ask", "")), s(ok("2"))},
			[]string{`requestState 3 has inputResponses but not the requestState "abc"`}},
		{"requestState not a string", []unit{c(call("1", "ask")), s(inputRequired("1", `"abc"`)), c(retry("2", "ask", `{"v":"abc"}`))},
			[]string{`requestState 3 is {"v":"abc"}, not the string`}},
		{"requestState of another request", []unit{c(call("1", "ask")), s(inputRequired("1", `"abc"`)), c(retry("2", "other", `"abc"`))},
			[]string{`requestState 3 tools/call "other" echoes the requestState of another request (tools/call ask)`}},
		{"requestState never sent", []unit{c(call("1", "ask")), s(inputRequired("1", "")), c(retry("2", "ask", `"forged"`))},
			[]string{`requestState 3 carries the requestState "forged", which no input_required result`}},
		{"no requestState sent, none echoed", []unit{c(call("1", "ask")), s(inputRequired("1", "")), c(retry("2", "ask", "")), s(ok("2"))}, nil},
		{"requestState over HTTP, stateless", []unit{
			hc(1, h26("tools/call", "ask"), call("1", "ask")), {line: "<headers", ex: 1}, hs(1, inputRequired("1", `"s1"`)), {line: "end", ex: 1},
			hc(2, h26("tools/call", "ask"), retry("1", "ask", `"s2"`)), hs(2, ok("1"))},
			[]string{`requestState 3 the requestState of tools/call "ask" was changed: the server sent "s1", the client echoed "s2"`}},

		// unknown ids
		{"answered", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, nil},
		{"server answers an id never sent", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":2,"result":{}}`)},
			[]string{"unknownId 2 the server answered id 2, which the client never sent"}},
		{"server answers twice", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
			[]string{"unknownId 3 the server answered id 1"}},
		{"ids 1 and \"1\" differ", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":"1","result":{}}`)},
			[]string{`unknownId 2 the server answered id "1"`}},
		{"client answers a server request never sent", []unit{c(init1125), s(initResult("2025-11-25")), c(`{"jsonrpc":"2.0","id":5,"result":{"roots":[]}}`)},
			[]string{"unknownId 3 the client answered id 5, which the server never sent"}},
		{"client answers a server request", []unit{c(init1125), s(initResult("2025-11-25")), s(`{"jsonrpc":"2.0","id":5,"method":"roots/list"}`), c(`{"jsonrpc":"2.0","id":5,"result":{"roots":[]}}`)}, nil},
		{"error of no id", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"ping"`), s(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)}, nil},
		{"batch with one unknown", []unit{c(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`), s(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":3,"result":{}}]`)},
			[]string{"unknownId 4 the server answered id 3"}},
		{"HTTP answer on the GET stream", []unit{
			hc(1, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":4,"method":"ping"}`), {line: "end", ex: 1},
			{line: `< {"jsonrpc":"2.0","id":4,"result":{}}`, ex: 2, stream: "get"}}, nil},
		{"HTTP server request on the GET stream answered", []unit{
			{line: `< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`, ex: 2, stream: "get"},
			hc(3, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`)}, nil},
		{"HTTP unknown on the GET stream", []unit{
			{line: `< {"jsonrpc":"2.0","id":4,"result":{}}`, ex: 2, stream: "get"}},
			[]string{"unknownId 1 the server answered id 4"}},
		{"HTTP session from initialize", []unit{
			hc(1, nil, init0618), {line: "<headers", ex: 1, sid: "a"}, hs(1, initResult("2025-06-18")),
			hc(2, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":0,"method":"ping"}`), hs(2, `{"jsonrpc":"2.0","id":0,"result":{}}`)}, nil},

		// duplicate ids
		{"id reused after its answer", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`), c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, nil},
		{"id reused in flight", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`), s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)},
			[]string{"duplicateId 2 the client reused id 1 while its ping request with that id is still waiting"}},
		{"batch with a duplicate", []unit{c(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`), s(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]`)},
			[]string{"duplicateId 2 the client reused id 1"}},
		{"server request id reused in flight", []unit{c(init1125), s(initResult("2025-11-25")), s(`{"jsonrpc":"2.0","id":0,"method":"roots/list"}`), s(`{"jsonrpc":"2.0","id":0,"method":"ping"}`)},
			[]string{"duplicateId 4 the server reused id 0 while its roots/list request"}},
		{"client and server ids are apart", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`), s(`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`), c(`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`), s(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)}, nil},
		{"two HTTP sessions, same id", []unit{
			hc(1, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			hc(2, map[string]string{"Mcp-Session-Id": "b"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			hs(1, `{"jsonrpc":"2.0","id":1,"result":{}}`), hs(2, `{"jsonrpc":"2.0","id":1,"result":{}}`)}, nil},
		{"one HTTP session, same id", []unit{
			hc(1, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			hc(2, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			hs(1, `{"jsonrpc":"2.0","id":1,"result":{}}`), hs(2, `{"jsonrpc":"2.0","id":1,"result":{}}`)},
			[]string{"duplicateId 2 the client reused id 1"}},
		{"two stateless POSTs, same id", []unit{
			hc(1, h26("tools/call", "a"), call("1", "a")), hc(2, h26("tools/call", "a"), call("1", "a")),
			hs(1, ok("1")), hs(2, ok("1"))}, nil},
		{"retry after an exchange the tap answered", []unit{
			hc(1, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), {line: "end", ex: 1},
			hc(2, map[string]string{"Mcp-Session-Id": "a"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), hs(2, `{"jsonrpc":"2.0","id":1,"result":{}}`)}, nil},

		// notifications
		{"2025-06-18 initialized", []unit{c(init0618), s(initResult("2025-06-18")), c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)}, nil},
		{"2026 client sends initialized", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26 + `}}`), c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
			[]string{"notification 2 notifications/initialized is not a client notification of protocol version 2026-07-28 (it is one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25)"}},
		{"2025-06-18 server sends elicitation/complete", []unit{c(init0618), s(initResult("2025-06-18")), s(`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e"}}`)},
			[]string{"notification 3 notifications/elicitation/complete is not a server notification of protocol version 2025-06-18 (it is one of 2025-11-25)"}},
		{"2025-11-25 server sends elicitation/complete", []unit{c(init1125), s(initResult("2025-11-25")), s(`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e"}}`)}, nil},
		{"2026 server acknowledges a listen", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + meta26 + `}}`), s(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`)}, nil},
		{"2025 server acknowledges", []unit{c(init1125), s(initResult("2025-11-25")), s(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`)},
			[]string{"notification 3 notifications/subscriptions/acknowledged is not a server notification of protocol version 2025-11-25 (it is one of 2026-07-28)"}},
		{"made-up notification", []unit{c(init1125), s(initResult("2025-11-25")), s(`{"jsonrpc":"2.0","method":"notifications/made_up"}`)},
			[]string{"notification 3 notifications/made_up is not a server notification of protocol version 2025-11-25 (nor of any version)"}},
		{"extension method", []unit{c(init1125), s(initResult("2025-11-25")), s(`{"jsonrpc":"2.0","method":"acme/tick"}`)}, nil},
		{"no version negotiated yet", []unit{s(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged"}`)}, nil},
		{"HTTP 2026 client notification by header", []unit{hc(1, map[string]string{"Mcp-Protocol-Version": v26, "Mcp-Method": "notifications/roots/list_changed"}, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)},
			[]string{"notification 1 notifications/roots/list_changed is not a client notification of protocol version 2026-07-28"}},
		{"HTTP GET stream, versions of all sessions", []unit{
			hc(1, nil, init1125), {line: "<headers", ex: 1, sid: "a"}, hs(1, initResult("2025-11-25")),
			hc(2, nil, init0618), {line: "<headers", ex: 2, sid: "b"}, hs(2, initResult("2025-06-18")),
			{line: `< {"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e"}}`, ex: 3, stream: "get"},
			{line: `< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged"}`, ex: 3, stream: "get"}},
			[]string{"notification 6 notifications/subscriptions/acknowledged is not a server notification of protocol version any negotiated version"}},

		// outputSchema
		{"result matches", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), s(toolsList), c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count"}}`), s(structured("2", `{"n":3}`))}, nil},
		{"result does not match", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), s(toolsList), c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count"}}`), s(structured("2", `{"n":"three"}`))},
			[]string{`outputSchema 4 the result of tool "count": its structuredContent does not match the tool's outputSchema: /n: got string, want number`}},
		{"result without structuredContent", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), s(toolsList), c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count"}}`), s(ok("2"))},
			[]string{`outputSchema 4 the result of tool "count": the tool declares an outputSchema but the result has no structuredContent`}},
		{"tool error is not held to the schema", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), s(toolsList), c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count"}}`), s(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`)}, nil},
		{"tool without outputSchema", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), s(toolsList), c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"free"}}`), s(ok("2"))}, nil},
		{"2026 input_required is not held to the schema", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta26 + `}}`), s(toolsList), c(call("2", "count")), s(inputRequired("2", `"x"`))}, nil},
		{"2026 batch-free result does not match", []unit{c(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta26 + `}}`), s(toolsList), c(call("2", "count")), s(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[],"structuredContent":{}}}`)},
			[]string{`outputSchema 4 the result of tool "count": its structuredContent does not match the tool's outputSchema: /: missing property 'n'`}},
		{"batch result does not match", []unit{c(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`), s(`[` + toolsList + `]`), c(`[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count"}},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count"}}]`), s(`[` + structured("2", `{"n":1}`) + `,` + structured("3", `{"n":null}`) + `]`)},
			[]string{`outputSchema 6 the result of tool "count": its structuredContent does not match`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, recs := warnings(t, tc.units)
			if len(ws) != len(tc.want) {
				t.Fatalf("%d warnings, want %d: %+v", len(ws), len(tc.want), ws)
			}
			for i, w := range tc.want {
				kind, rest, _ := strings.Cut(w, " ")
				index, detail, _ := strings.Cut(rest, " ")
				got := ws[i]
				if got.Kind != kind || itoa(got.Message) != index || !strings.Contains(got.Detail, detail) {
					t.Errorf("warning %d = %+v, want %s at message %s with %q", i, got, kind, index, detail)
				}
			}
			if len(recs) != len(ws) {
				t.Fatalf("%d warning records in the live log, want %d", len(recs), len(ws))
			}
			for i, r := range recs {
				if r.Level != slog.LevelWarn {
					t.Errorf("record %d is at level %v", i, r.Level)
				}
				var note string
				var msg json.RawMessage
				r.Attrs(func(a slog.Attr) bool {
					switch a.Key {
					case livelog.NoteKey:
						note = a.Value.String()
					case livelog.MessageKey:
						msg, _ = a.Value.Any().(json.RawMessage)
					}
					return true
				})
				if want := "contract " + ws[i].Kind + ": " + ws[i].Detail; note != want || r.Message != "⚠ "+want {
					t.Errorf("record %d: line %q, note %q; want %q", i, r.Message, note, want)
				}
				if !json.Valid(msg) || !strings.Contains(string(msg), `"jsonrpc"`) {
					t.Errorf("record %d carries no message: %s", i, msg)
				}
			}
		})
	}
}

// TestContractReadsParamsAsTheReplay: the checks read a request's params
// as the replay does (mcp.ReadParams): the last of duplicate names, the
// name member of each method, a requestState as written.
func TestContractReadsParamsAsTheReplay(t *testing.T) {
	for _, c := range []struct {
		line                 string
		name, state, version string
		inputResponses       bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"a","name":"b","requestState":5,"inputResponses":null}}`,
			`"b"`, `5`, "2026-07-28", true},
		{`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"name":"n","uri":"file:///x"}}`, `"file:///x"`, ``, "", false},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, ``, ``, "", false},
	} {
		msg, err := jsonrpc.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		p := readParams(msg)
		if string(p.name) != c.name || string(p.state) != c.state || p.version != c.version || p.inputResponses != c.inputResponses {
			t.Errorf("readParams(%s) = name %s, state %s, version %q, inputResponses %v; want %s, %s, %q, %v",
				c.line, p.name, p.state, p.version, p.inputResponses, c.name, c.state, c.version, c.inputResponses)
		}
	}
}
