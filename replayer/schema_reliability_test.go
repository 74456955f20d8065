package replayer

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

func initializeAt(version string) string {
	return `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},` +
		`"response":{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"` + version + `","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}}`
}

func toolsList(tools string) string {
	return `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"tools/list"},` +
		`"response":{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tools + `]}}}}`
}

const weatherTool = `{"name":"get_weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}},"required":["city"],"additionalProperties":false},` +
	`"outputSchema":{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}}`

// draft7Tool declares an older draft: "dependencies" is a draft-7 keyword
// that 2020-12 no longer knows.
const draft7Tool = `{"name":"old","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"dependencies":{"a":["b"]}}}`

func callParams(id int, tool, args, meta string) string {
	p := `{"name":"` + tool + `","arguments":` + args
	if meta != "" {
		p += `,"_meta":` + meta
	}
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":` + p + `}}`
}

func TestSchemaValidation(t *testing.T) {
	weatherResult := `{"content":[{"type":"text","text":"sunny"}],"structuredContent":{"temp":21}}`
	for _, tc := range []struct {
		name, version, args, meta string
		noValidate                bool
		want                      string // "recorded", "isError", "-32602", "miss"
	}{
		{name: "valid and recorded", version: "2025-11-25", args: `{"city":"Paris"}`, want: "recorded"},
		{name: "valid but not recorded is a miss", version: "2025-11-25", args: `{"city":"Rome","days":2}`, want: "miss"},
		{name: "missing required 2025-11-25", version: "2025-11-25", args: `{}`, want: "isError"},
		{name: "wrong type 2025-11-25", version: "2025-11-25", args: `{"city":"Paris","days":"two"}`, want: "isError"},
		{name: "wrong type 2025-06-18", version: "2025-06-18", args: `{"city":"Paris","days":"two"}`, want: "-32602"},
		{name: "extra property 2024-11-05", version: "2024-11-05", args: `{"city":"Paris","x":1}`, want: "-32602"},
		{name: "below minimum 2025-03-26", version: "2025-03-26", args: `{"city":"Paris","days":0}`, want: "-32602"},
		{name: "2026 per-request version", version: "2025-06-18", args: `{"days":1}`, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, want: "isError"},
		{name: "recorded invalid call answers as recorded", version: "2025-06-18", args: `{"city":7}`, want: "recorded"},
		{name: "validation off", version: "2025-06-18", args: `{"days":"x"}`, noValidate: true, want: "miss"},
		{name: "older draft declared", version: "2025-06-18", args: `{"a":"x"}`, want: "-32602"},
		{name: "older draft valid", version: "2025-06-18", args: `{"a":"x","b":"y"}`, want: "miss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := "get_weather"
			if strings.HasPrefix(tc.args, `{"a"`) {
				tool = "old"
			}
			w, _ := serveCassette(t, cassette(
				initializeAt(tc.version),
				toolsList(weatherTool+","+draft7Tool),
				call(2, "get_weather", `{"city":"Paris"}`, weatherResult),
				call(3, "get_weather", `{"city":7}`, `{"content":[{"type":"text","text":"the server let it through"}],"isError":true}`),
			), &Options{NoSchemaValidation: tc.noValidate})
			w.send(callParams(40, tool, tc.args, tc.meta))
			m := w.recv()
			if m["id"] != float64(40) {
				t.Fatalf("answer to id %v, want 40: %v", m["id"], m)
			}
			got := "recorded"
			res, _ := m["result"].(map[string]any)
			switch {
			case m["error"] != nil:
				code := m["error"].(map[string]any)["code"].(float64)
				if code == -32602 {
					got = "-32602"
					if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "Invalid arguments for tool "+tool) {
						t.Errorf("message %q does not name the tool", msg)
					}
				} else {
					got = "miss"
				}
			case res["isError"] == true && !strings.Contains(textOf(res), "let it through"):
				got = "isError"
				if !strings.Contains(textOf(res), "Invalid arguments for tool "+tool) {
					t.Errorf("text %q does not name the tool", textOf(res))
				}
				if tc.meta != "" && res["resultType"] != "complete" {
					t.Errorf("2026 result without resultType complete: %v", res)
				}
			}
			if got != tc.want {
				t.Errorf("got %s, want %s: %v", got, tc.want, m)
			}
		})
	}
}

func textOf(res map[string]any) string {
	b, _ := json.Marshal(res["content"])
	return string(b)
}

func TestCheckOutputSchemas(t *testing.T) {
	c, err := cassettes.Parse("t.json", []byte(cassette(
		initializeAt("2025-11-25"),
		toolsList(weatherTool+`,{"name":"broken","inputSchema":{"type":"nonsense"}}`),
		call(2, "get_weather", `{"city":"Paris"}`, `{"content":[],"structuredContent":{"temp":21}}`),
		call(3, "get_weather", `{"city":"Oslo"}`, `{"content":[],"structuredContent":{"temp":"cold"}}`),
		call(4, "get_weather", `{"city":"Rome"}`, `{"content":[]}`),
		call(5, "get_weather", `{"city":"Nice"}`, `{"content":[],"isError":true}`),
	)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range CheckOutputSchemas(c) {
		got = append(got, e.Error())
	}
	want := []string{`interaction 2: tool "broken": its inputSchema`, `interaction 4: tool "get_weather": structuredContent does not match its outputSchema: /temp:`, `interaction 5: tool "get_weather" has an outputSchema but its result has no structuredContent`}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}
