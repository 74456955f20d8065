package livelog

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

var update = flag.Bool("update", false, "rewrite testdata/lines.golden from what the log writes")

// lineCases are messages of every shape the log describes, each logged
// with a latency and a note, in both directions.
var lineCases = []struct {
	raw     string
	latency time.Duration
	note    string
}{
	{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"},"_meta":{"x":1}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}`, 0, "replayed #2"},
	{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","units":"metric"},"_meta":{"progressToken":12}}}`, 0, "replayed #3"},
	{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7,"arguments":{}}}`, 0, "no match"},
	{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{"a":1}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"login","arguments":{"apiKey":"hunter2-very-secret","user":"bob","header":"Bearer abcdefghijklmnop"}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"long","arguments":{"text":"` + strings.Repeat("abcdefghij", 60) + `"}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"uni","arguments":{"text":"Grüße, 東京 — ☀ ` + strings.Repeat("é", 100) + `"}}}`, 0, ""},
	{"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"spaced\",\"arguments\":{ \"a\" : [ 1 , 2 ],\n\t\"b\" : \"x y\" }}}", 0, ""},
	{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"k","arguments":{"q":"https://api.example.com/v1?api_key=sk-abcdefghijklmnopqrstuvwxyz&x=1","u":"https://user:pa55word@host/x"}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"nullargs","arguments":null}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"file:///tmp/a.txt"}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":14,"method":"ping","params":{}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":15,"method":"ping","params":{"_meta":{"k":"v"}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":16,"method":"prompts/get","params":{"name":"p","arguments":{"x":"` + strings.Repeat("y", 300) + `"}}}`, 0, "scripted: delay 1s"},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
	{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":12,"progress":1,"total":3}}`, 0, ""},
	{`{"jsonrpc":"2.0","method":"custom/notify","params":{"a":"b"}}`, 0, "in a batch, as recorded"},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Sunny, 22°C in New York; wind 12 km/h from the west."}],"structuredContent":{"temperature":22},"isError":false}}`, 1234567 * time.Nanosecond, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a <b> & \"c\"\n\td\u2028e\\f"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"resource","resource":{"uri":"x"}},{"type":"audio","mimeType":"audio/wav"}]}}`, 999 * time.Microsecond, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("long text ", 20) + `"}]}}`, 2500 * time.Millisecond, "scripted: slow"},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"failed: no such city"}],"isError":true}}`, time.Millisecond, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"isError":true}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"isError":"true","content":[{"type":"text","text":"t"}]}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":5}]}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"},7]}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[null,{"type":"text","text":null}]}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":{"type":"text"}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"token sk-abcdefghijklmnopqrstuvwxyz0123 here"}]}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ghp_abcdefghijklmnopqrstuvwxyz0123456789 then ` + strings.Repeat("z", 80) + `"}]}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"_meta":{"a":1},"nextCursor":"c2"}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"only":true}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":{"password":"p4ss","token":"abc","nested":{"clientSecret":"s"}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":[1,2,3]}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":null}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"result":"just text"}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`, 3 * time.Microsecond, ""},
	{`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"first line\nsecond line","data":{"apiKey":"x"}}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"Bearer abcdefghijklmnopqrstuv rejected"}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`, 0, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e\u0301t\u00e9","arguments":{"s":"\ud83d\ude00 <tag> & amp"}}}`, 0, ""},
}

// TestMessageLines: the live log's text lines of every shape of message,
// against the golden file (rewritten with -update), through a plain text
// handler and through one that redacts a recording's rules, in both
// directions. The lines are what people read and tests outside the
// project match; a change to how they are made must not change them.
func TestMessageLines(t *testing.T) {
	rd, err := cassettes.NewRedactor(cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Values: []string{"bob"}}))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for i, c := range lineCases {
		msg, err := jsonrpc.Parse([]byte(c.raw))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for _, h := range []struct {
			name string
			l    func(w io.Writer) *slog.Logger
		}{
			{"text", func(w io.Writer) *slog.Logger { return slog.New(NewTextHandler(w)) }},
			{"colored", func(w io.Writer) *slog.Logger { return slog.New(NewTextHandler(w).Colored()) }},
			{"redacting", func(w io.Writer) *slog.Logger { return Redacting(slog.New(NewTextHandler(w)), rd) }},
			{"json", func(w io.Writer) *slog.Logger {
				return Redacting(slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: noTime})), rd)
			}},
		} {
			for _, dir := range []string{ToServer, ToClient} {
				var out bytes.Buffer
				Message(h.l(&out), dir, msg, c.latency, c.note)
				fmt.Fprintf(&got, "%d %s %s\n", i, h.name, strings.TrimSuffix(strings.ReplaceAll(out.String(), "\x1b", "ESC"), "\n"))
			}
		}
	}
	// Describe, for the structured handlers: its line and attributes.
	for i, c := range lineCases {
		msg, _ := jsonrpc.Parse([]byte(c.raw))
		line, level, attrs := Describe(ToServer, msg, c.latency, c.note)
		fmt.Fprintf(&got, "%d describe %s %s %v\n", i, level, line, attrs)
	}
	path := "testdata/lines.golden"
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, gl, wl)
		}
	}
}

// noTime drops the time of a JSON record, for a golden file.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
