package mcp

import (
	"encoding/json"
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// The examples of the Value Encoding section of the 2026-07-28 Streamable
// HTTP transport, and the edges around them.
func TestEncodeValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"get_weather", "get_weather"},
		{"file:///projects/myapp/config.json", "file:///projects/myapp/config.json"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"inner space", "inner space"},
		{"", ""},
		{"tab\there", "=?base64?dGFiCWhlcmU=?="},
		{"del\x7f", "=?base64?ZGVsfw==?="},
	}
	for _, tt := range tests {
		if got := EncodeValue(tt.in); got != tt.want {
			t.Errorf("EncodeValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDecodeValue(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"us-west1", "us-west1", true},
		{"=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", true},
		{"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?=", true},
		{"=?base64?not base64!?=", "", false},
		{"tab\tinside", "tab\tinside", true}, // RFC 9110 allows a tab
		{"new\nline", "", false},
		{"caf\xc3\xa9", "", false},                   // a header value is ASCII
		{"=?BASE64?SGk=?=", "=?BASE64?SGk=?=", true}, // the markers are case-sensitive
		{"=?base64??=", "", true},
	}
	for _, tt := range tests {
		got, ok := DecodeValue(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("DecodeValue(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzNameCodec checks that every string survives the Value Encoding, and
// that what the encoder sends is a valid header value.
func FuzzNameCodec(f *testing.F) {
	for _, s := range []string{"", "get_weather", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "=?base64?=", "=?base64??=", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeValue(s)
		got, ok := DecodeValue(enc)
		if !ok || got != s {
			t.Fatalf("DecodeValue(EncodeValue(%q)) = %q, %v (encoded %q)", s, got, ok, enc)
		}
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("EncodeValue(%q) = %q holds byte %#x, not allowed in a header value", s, enc, enc[i])
			}
		}
		if !utf8.ValidString(enc) {
			t.Fatalf("EncodeValue(%q) = %q is not UTF-8", s, enc)
		}
	})
}

func TestNameMember(t *testing.T) {
	// The Standard Request Headers table of the 2026-07-28 transport.
	tests := map[string]string{
		"tools/call":     "name",
		"prompts/get":    "name",
		"resources/read": "uri",
		"tools/list":     "",
		"initialize":     "",
		"":               "",
	}
	for method, want := range tests {
		if got := NameMember(method); got != want {
			t.Errorf("NameMember(%q) = %q, want %q", method, got, want)
		}
	}
}

func TestSetRequestHeaders(t *testing.T) {
	tests := []struct {
		name    string
		msg     string // "" for none
		version string
		want    http.Header
	}{
		{"no message", "", "2025-11-25", http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}},
		{"nothing", "", "", http.Header{}},
		{"tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather"}}`, "2025-11-25",
			http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"get_weather"}, "Mcp-Protocol-Version": {"2025-11-25"}}},
		{"meta version wins", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"Grüße","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "2025-11-25",
			http.Header{"Mcp-Method": {"prompts/get"}, "Mcp-Name": {"=?base64?R3LDvMOfZQ==?="}, "Mcp-Protocol-Version": {"2026-07-28"}}},
		{"resource", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a.txt"}}`, "",
			http.Header{"Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///a.txt"}}},
		// A resources/read carries its uri, never a name beside it, and a
		// tools/call its name, never a uri (the encoder of
		// internal/mcphttp took whichever of name and uri came first).
		{"resource with a name", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"name":"readme","uri":"file:///a.txt"}}`, "",
			http.Header{"Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///a.txt"}}},
		{"tool without a name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"uri":"file:///a.txt"}}`, "",
			http.Header{"Mcp-Method": {"tools/call"}}},
		{"name not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, "",
			http.Header{"Mcp-Method": {"tools/call"}}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "2025-06-18",
			http.Header{"Mcp-Method": {"notifications/initialized"}, "Mcp-Protocol-Version": {"2025-06-18"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msg *jsonrpc.Message
			if tt.msg != "" {
				var err error
				if msg, err = jsonrpc.Parse([]byte(tt.msg)); err != nil {
					t.Fatal(err)
				}
			}
			h := http.Header{}
			SetRequestHeaders(h, msg, tt.version)
			if diff := cmp.Diff(tt.want, h); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			// What the client side sets, the server side reads back.
			if v := h.Get(HeaderName); v != "" {
				got, ok := DecodeValue(v)
				raw, _ := jsonrpc.Member(msg.Params, NameMember(msg.Method))
				var want string
				json.Unmarshal(raw, &want)
				if !ok || got != want {
					t.Errorf("Mcp-Name %q decodes to %q, %v; the body has %q", v, got, ok, want)
				}
			}
		})
	}
}
