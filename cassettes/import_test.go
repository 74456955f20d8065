package cassettes

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readImport reads a file of testdata/import (PROVENANCE.md).
func readImport(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// eventLine is an event as one line: direction, exchange, stream, and the
// message's method or id, or the response's status and form.
func eventLine(ev CaptureEvent) string {
	s := string(ev.From)
	if h := ev.HTTP; h != nil {
		s += fmt.Sprintf(" ex%d", h.Exchange)
		if h.Stream != "" {
			s += " " + h.Stream
		}
		if h.HasEventID {
			s += " event " + h.EventID
		}
		if h.Response {
			return s + fmt.Sprintf(" response %d %s %s", h.Status, h.Form, h.Body)
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(ev.Data, &m) != nil {
		return s + " " + string(ev.Data)
	}
	if m.Method != "" {
		return s + " " + m.Method
	}
	return s + " answer " + string(m.ID)
}

func eventLines(cp *Capture) []string {
	var out []string
	for _, ev := range cp.Events {
		out = append(out, eventLine(ev))
	}
	return out
}

func TestImportRealCaptures(t *testing.T) {
	weather := []string{"client initialize", "server answer 1", "client notifications/initialized",
		"client tools/call", "server answer 2", "client tools/call", "server answer 3", "client tools/call", "server answer 4"}
	// (The mcp-go client sent its fourth call before the third's answer.)
	weather2026 := []string{"client server/discover", "server answer 1",
		"client tools/call", "server answer 2", "client tools/call", "client tools/call", "server answer 3", "server answer 4"}
	var echo []string
	for ex := 1; ex <= 7; ex++ {
		method := map[int]string{1: "server/discover", 5: "server/discover"}[ex]
		if method == "" {
			method = "tools/call"
		}
		echo = append(echo, fmt.Sprintf("client ex%d %s", ex, method), fmt.Sprintf("server ex%d response 200 sse ", ex), fmt.Sprintf("server ex%d answer %d", ex, map[int]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 1, 6: 2, 7: 3}[ex]))
	}
	tests := []struct {
		file      string
		imp       Importer
		want      []string
		transport string
		server    string
	}{
		{"mcpsnoop-weather-stdio-2025-11-25.jsonl", ImportMCPSnoop, weather, "stdio", "weather-server"},
		{"mcpsnoop-weather-stdio-2026-07-28.jsonl", ImportMCPSnoop, weather2026, "stdio", "weather-server"},
		{"weather-stdio-2025-11-25.lines", ImportLines, weather, "stdio", ""},
		{"mitmproxy-echo-stateless-2026-07-28.har", ImportHAR, echo, "streamable-http", "http://127.0.0.1:50917/mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cp, err := tt.imp(tt.file, readImport(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, eventLines(cp)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if len(cp.Warnings) > 0 {
				t.Errorf("warnings: %q", cp.Warnings)
			}
			if cp.Meta.Transport != tt.transport || strings.Join(cp.Meta.Server, " ") != tt.server {
				t.Errorf("meta = %+v, want transport %q, server %q", cp.Meta, tt.transport, tt.server)
			}
			if tt.imp != nil && tt.file != "weather-stdio-2025-11-25.lines" {
				if cp.Start.IsZero() || cp.Events[0].At.Before(cp.Start) || cp.Events[len(cp.Events)-1].At.Sub(cp.Start) <= 0 {
					t.Errorf("times: start %v, first %v, last %v", cp.Start, cp.Events[0].At, cp.Events[len(cp.Events)-1].At)
				}
			}
		})
	}
}

// harOf is a HAR of the given entries (JSON objects).
func harOf(entries ...string) []byte {
	return []byte(`{"log":{"version":"1.2","creator":{"name":"test","version":"1"},"entries":[` + strings.Join(entries, ",") + `]}}`)
}

// harEntryOf is one HAR entry: a request (method, path, request headers as
// a JSON list, body) and its response (status, content type, text,
// encoding).
func harEntryOf(at, method, path, reqHeaders, body string, status int, ct, text, encoding string) string {
	post := ""
	if body != "" {
		post = fmt.Sprintf(`,"postData":{"mimeType":"application/json","text":%q}`, body)
	}
	enc := ""
	if encoding != "" {
		enc = fmt.Sprintf(`,"encoding":%q`, encoding)
	}
	return fmt.Sprintf(`{"startedDateTime":"2026-01-01T00:00:%sZ","time":2,"request":{"method":%q,"url":"http://127.0.0.1:8080%s","headers":%s%s},`+
		`"response":{"status":%d,"headers":[{"name":"Content-Type","value":%q}],"content":{"mimeType":%q,"text":%q%s}},"timings":{"send":0,"wait":1,"receive":1}}`,
		at, method, path, reqHeaders, post, status, ct, ct, text, enc)
}

func TestImportHARForms(t *testing.T) {
	sid := `[{"name":"Mcp-Session-Id","value":"s1"}]`
	b64 := base64.StdEncoding.EncodeToString([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}`))
	sse := "id: e0\ndata:\n\nid: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\nid: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"
	har := harOf(
		harEntryOf("00.000", "GET", "/", `[]`, "", 200, "text/html", "<html>", ""),
		harEntryOf("01.000", "POST", "/mcp", `[]`, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, ""),
		harEntryOf("02.000", "POST", "/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, "", "", ""),
		harEntryOf("03.000", "POST", "/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 200, "application/json", b64, "base64"),
		harEntryOf("04.000", "POST", "/mcp", sid, `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":1}}},{"jsonrpc":"2.0","method":"notifications/cancelled"}]`, 200, "text/event-stream", sse, ""),
		// A resumed stream sends e2 again: an echo, not a message.
		harEntryOf("05.000", "GET", "/mcp", sid, "", 200, "text/event-stream", "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\nid: g1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n", ""),
		harEntryOf("06.000", "POST", "/mcp", sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call"}`, 401, "text/plain", "no token", ""),
		harEntryOf("07.000", "DELETE", "/mcp", sid, "", 200, "", "", ""),
		harEntryOf("08.000", "POST", "/mcp", sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`, 200, "text/event-stream", "", ""),
	)
	cp, err := ImportHAR("forms.har", har)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"client ex2 initialize", "server ex2 response 200 json ", "server ex2 answer 1",
		"client ex3 notifications/initialized", "server ex3 response 202 none ",
		"client ex4 tools/list", "server ex4 response 200 json ", "server ex4 answer 2",
		"client ex5 [", "server ex5 response 200 sse ", "server ex5 event e0 response 0  ", "server ex5 event e1 notifications/progress", "server ex5 event e2 answer 3",
		// At the end of its stream, as nothing says when it came.
		"server ex6 get event g1 notifications/tools/list_changed",
		"client ex7 tools/call", "server ex7 response 401 none no token",
		"server ex8 response 200 none ",
		"client ex9 tools/call", "server ex9 response 200 sse ",
	}
	got := eventLines(cp)
	for i := range got {
		if strings.HasPrefix(got[i], "client ex5 [") {
			got[i] = "client ex5 ["
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"log.entries[0]: GET / carries no MCP; left out", "log.entries[8]: the event stream's body is not in the HAR: its messages are missing"}, cp.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if h := cp.Events[3].HTTP.RequestHeaders; h["Mcp-Session-Id"][0] != "s1" {
		t.Errorf("request headers of the notification: %v", h)
	}
}

func TestImportHARLegacySSE(t *testing.T) {
	stream := "event: endpoint\ndata: /message?sessionId=abc\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	har := harOf(
		harEntryOf("00.000", "GET", "/sse", `[]`, "", 200, "text/event-stream", stream, ""),
		harEntryOf("00.100", "POST", "/message?sessionId=abc", `[]`, `{"jsonrpc":"2.0","id":0,"method":"initialize"}`, 202, "", "", ""),
		harEntryOf("00.200", "POST", "/message?sessionId=abc", `[]`, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, 202, "", "", ""),
		harEntryOf("00.300", "POST", "/message?sessionId=abc", `[]`, `{"jsonrpc":"2.0","id":7,"result":{"roots":[]}}`, 202, "", "", ""),
	)
	cp, err := ImportHAR("legacy.har", har)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"client ex2 initialize", "server ex2 response 202 none ", "server ex0 answer 0",
		"client ex3 tools/call", "server ex3 response 202 none ", "server ex0 roots/list",
		"client ex4 answer 7", "server ex0 notifications/message", "server ex0 answer 1", "server ex4 response 202 none ",
	}
	if diff := cmp.Diff(want, eventLines(cp)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if cp.Meta.Transport != "sse" {
		t.Errorf("transport %q, want sse", cp.Meta.Transport)
	}
}

func TestImportErrors(t *testing.T) {
	entry := harEntryOf("01.000", "POST", "/mcp", `[]`, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, 200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, "")
	tests := []struct {
		name string
		imp  Importer
		data string
		want string
	}{
		{"lines/prefix", ImportLines, "> {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n? {}\n", `import "in": line 2: want "> " (from the client) or "< " (from the server) before the message, not "? {}"`},
		{"lines/empty message", ImportLines, "\n<  \n", `import "in": line 2: no message after the prefix`},
		{"lines/nothing", ImportLines, "# only a comment\n\n", `import "in": no messages`},
		{"mcpsnoop/not json", ImportMCPSnoop, "{\"direction\":\"meta\",\"ts\":\"2026-01-01T00:00:00Z\"}\nnot json\n", `import "in": line 2: not an mcpsnoop trace line: invalid character 'o' in literal null (expecting 'u')`},
		{"mcpsnoop/direction", ImportMCPSnoop, `{"direction":"up","ts":"2026-01-01T00:00:00Z","raw":{}}`, `import "in": line 1: unknown direction "up" (want meta, c2s or s2c)`},
		{"mcpsnoop/ts", ImportMCPSnoop, `{"direction":"c2s","ts":"yesterday","raw":{}}`, `import "in": line 1: ts "yesterday" is not an RFC 3339 time`},
		{"mcpsnoop/raw", ImportMCPSnoop, `{"direction":"s2c","ts":"2026-01-01T00:00:00Z"}`, `import "in": line 1: a s2c line with no raw message`},
		{"mcpsnoop/nothing", ImportMCPSnoop, `{"direction":"meta","ts":"2026-01-01T00:00:00Z","raw":{}}`, `import "in": no messages (no c2s or s2c line)`},
		{"har/syntax", ImportHAR, "{\"log\":\n{,}}", `import "in": line 2, column 2: not a HAR file: invalid character ',' looking for beginning of object key string`},
		{"har/no log", ImportHAR, `{}`, `import "in": not a HAR file: no "log" object`},
		{"har/time", ImportHAR, string(harOf(entry, `{"startedDateTime":"now","request":{"method":"GET","url":"/"}}`)), `import "in": log.entries[1]: startedDateTime "now" is not an ISO 8601 time`},
		{"har/base64", ImportHAR, string(harOf(harEntryOf("01.000", "POST", "/mcp", `[]`, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, 200, "application/json", "!!", "base64"))), `import "in": log.entries[0]: response.content: text is not base64: illegal base64 data at input byte 0`},
		{"har/encoding", ImportHAR, string(harOf(harEntryOf("01.000", "POST", "/mcp", `[]`, `{}`, 200, "application/json", "x", "gzip"))), `import "in": log.entries[0]: response.content: unknown encoding "gzip" (want base64 or none)`},
		{"har/entry", ImportHAR, string(harOf(`[]`)), `import "in": log.entries[0]: not a HAR entry: json: cannot unmarshal array into Go value of type cassettes.harEntry`},
		{"har/no mcp", ImportHAR, string(harOf(harEntryOf("01.000", "GET", "/", `[]`, "", 200, "text/html", "<html>", ""))), `import "in": no MCP messages in its 1 entries`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.imp("in", []byte(tt.data))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrImport) {
				t.Errorf("not ErrImport: %v", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

// TestImportKeepsWhatDoesNotParse: a message that is not JSON-RPC is kept
// (the recorder keeps it as raw text) with a warning naming its place.
func TestImportKeepsWhatDoesNotParse(t *testing.T) {
	lines := "> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n< {broken\n#comment\n< {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
	cp, err := ImportLines("in.lines", []byte(lines))
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Events) != 3 || string(cp.Events[1].Data) != "{broken" {
		t.Errorf("events: %q", eventLines(cp))
	}
	if len(cp.Warnings) != 1 || !strings.HasPrefix(cp.Warnings[0], "line 2: not JSON-RPC") {
		t.Errorf("warnings: %q", cp.Warnings)
	}
	snoop := `{"session_id":"a","seq":1,"ts":"2026-01-01T00:00:00Z","direction":"s2c","transport":"stdio","raw":"Traceback (most recent call last):"}` + "\n" +
		`{"session_id":"b","seq":1,"ts":"2026-01-01T00:00:01Z","direction":"c2s","transport":"stdio","raw":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"session_id":"a","seq":2,"ts":"2026-01-01T00:00:02Z","direction":"c2s","transport":"stdio","raw":{"jsonrpc":"2.0","id":9,"method":"ping"}}`
	cp, err = ImportMCPSnoop("in.jsonl", []byte(snoop))
	if err != nil {
		t.Fatal(err)
	}
	// Session a whole, then session b.
	want := []string{"server Traceback (most recent call last):", "client ping", "client ping"}
	if diff := cmp.Diff(want, eventLines(cp)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(cp.Events[1].Data), `"id":9`) {
		t.Errorf("the second event is not session a's: %s", cp.Events[1].Data)
	}
	if len(cp.Warnings) != 1 || !strings.HasPrefix(cp.Warnings[0], "line 1: ") {
		t.Errorf("warnings: %q", cp.Warnings)
	}
}

// TestImportMCPSnoopHTTP: over HTTP, conn_id pairs a client's message with
// the server's answer and status.
func TestImportMCPSnoopHTTP(t *testing.T) {
	trace := `{"session_id":"s","seq":1,"ts":"2026-01-01T00:00:00Z","direction":"meta","transport":"http","raw":{"url":"http://127.0.0.1:9/mcp"}}
{"session_id":"s","seq":2,"ts":"2026-01-01T00:00:01Z","direction":"c2s","transport":"http","conn_id":1,"mcp_protocol_version":"2025-11-25","raw":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"session_id":"s","seq":3,"ts":"2026-01-01T00:00:02Z","direction":"s2c","transport":"http","conn_id":1,"status":200,"raw":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}`
	cp, err := ImportMCPSnoop("http.jsonl", []byte(trace))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"client ex1 tools/list", "server ex1 response 200  ", "server ex1 answer 1"}
	if diff := cmp.Diff(want, eventLines(cp)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if cp.Meta.Transport != "streamable-http" || cp.Meta.Server[0] != "http://127.0.0.1:9/mcp" {
		t.Errorf("meta %+v", cp.Meta)
	}
	if v := cp.Events[0].HTTP.RequestHeaders["Mcp-Protocol-Version"]; len(v) != 1 || v[0] != "2025-11-25" {
		t.Errorf("request headers %v", cp.Events[0].HTTP.RequestHeaders)
	}
}

// fuzzImport checks what every importer promises on any input: no panic;
// an error is ErrImport and names a place or says there is nothing; a
// capture holds events of a known side, each a message or a response.
func fuzzImport(f *testing.F, imp Importer, seeds ...string) {
	for _, s := range seeds {
		f.Add(readImport(f, s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cp, err := imp("fuzz", data)
		if err != nil {
			if !errors.Is(err, ErrImport) {
				t.Fatalf("error is not ErrImport: %v", err)
			}
			return
		}
		if len(cp.Events) == 0 {
			t.Fatal("a capture with no events")
		}
		for i, ev := range cp.Events {
			if ev.From != FromClient && ev.From != FromServer {
				t.Fatalf("event %d: from %q", i, ev.From)
			}
			if (ev.Data == nil) != (ev.HTTP != nil && ev.HTTP.Response) {
				t.Fatalf("event %d: data %q, http %+v", i, ev.Data, ev.HTTP)
			}
			if !cp.Start.IsZero() && ev.At.Before(cp.Start) {
				t.Fatalf("event %d at %v, before the start %v", i, ev.At, cp.Start)
			}
		}
	})
}

func FuzzImportHAR(f *testing.F) {
	f.Add(harOf(harEntryOf("01.000", "POST", "/mcp", `[]`, `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, 200, "text/event-stream", "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", "")))
	fuzzImport(f, ImportHAR, "mitmproxy-echo-stateless-2026-07-28.har")
}

func FuzzImportLines(f *testing.F) {
	fuzzImport(f, ImportLines, "weather-stdio-2025-11-25.lines", "weather-stdio-2026-07-28.lines")
}

func FuzzImportMCPSnoop(f *testing.F) {
	fuzzImport(f, ImportMCPSnoop, "mcpsnoop-weather-stdio-2025-11-25.jsonl", "mcpsnoop-weather-stdio-2026-07-28.jsonl")
}
