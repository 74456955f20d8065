package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestReadParams: one pass reads what jsonrpc.Member finds member by
// member, the last of duplicate names, escaped names included.
func TestReadParams(t *testing.T) {
	params := []byte(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/protocolVersion":"2026-07-28"},` +
		`"na\u006de":"echo","arguments":{"name":"inner","_meta":{}},"requestState":"s1","inputResponses":{"a":{}},"uri":"file:///a"}`)
	p := ReadParams(params)
	meta, _ := jsonrpc.Member(params, "_meta")
	for _, c := range []struct {
		field string
		got   []byte
		want  []byte
	}{
		{"Meta", p.Meta, meta},
		{"Name", p.Name, []byte(`"echo"`)},
		{"Arguments", p.Arguments, []byte(`{"name":"inner","_meta":{}}`)},
		{"RequestState", p.RequestState, []byte(`"s1"`)},
		{"InputResponses", p.InputResponses, []byte(`{"a":{}}`)},
		{"URI", p.URI, []byte(`"file:///a"`)},
		{"Version", p.Version, []byte(`"2026-07-28"`)},
		{"ClientCapabilities", p.ClientCapabilities, []byte(`{"roots":{}}`)},
		{"LogLevel", p.LogLevel, []byte(`"info"`)},
	} {
		if string(c.got) != string(c.want) {
			t.Errorf("%s = %s, want %s", c.field, c.got, c.want)
		}
	}
	if v := p.ProtocolVersion(); v != Version20260728 {
		t.Errorf("ProtocolVersion() = %q, want the last of the duplicates", v)
	}
	if s, retry := p.Retry(); s != "s1" || !retry {
		t.Errorf("Retry() = %q, %v", s, retry)
	}

	for _, raw := range []string{``, `[1,2]`, `{"_meta":[1]}`, `{"name":1,"_meta":{"x":1}}`} {
		p := ReadParams([]byte(raw))
		if p.Version != nil || p.ClientCapabilities != nil || p.LogLevel != nil || p.RequestState != nil {
			t.Errorf("ReadParams(%s) = %+v, reads members that are not there", raw, p)
		}
	}
	// Retry answers as decoding the params whole did: a requestState that
	// is no string is no retry; a null one leaves inputResponses to say.
	for raw, want := range map[string]bool{
		`{"requestState":5,"inputResponses":{}}`:    false,
		`{"requestState":null,"inputResponses":{}}`: true,
		`{"requestState":null}`:                     false,
		`{"inputResponses":null}`:                   true,
	} {
		p := ReadParams([]byte(raw))
		if _, retry := p.Retry(); retry != want {
			t.Errorf("Retry() of %s = %v, want %v", raw, retry, want)
		}
	}
}

// TestReadParamsAllocates: reading a 2026-07-28 request's params
// allocates nothing.
func TestReadParamsAllocates(t *testing.T) {
	params := []byte(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"m1"}}`)
	if n := testing.AllocsPerRun(100, func() {
		p := ReadParams(params)
		p.ProtocolVersion()
		p.Retry()
	}); n != 0 {
		t.Errorf("ReadParams allocates %v times", n)
	}
}

// TestRebase: what was read of params, moved to a copy and from there to
// another, is what reading the last copy gives, spans of it; and Named
// picks the name member of each method.
func TestRebase(t *testing.T) {
	params := []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"info"},"name":"echo","uri":"u","arguments":{}}`)
	body := append([]byte(`{"params":`), params...) // params inside a larger buffer
	in := body[len(`{"params":`):]
	a := append([]byte(nil), params...)
	b := append(make([]byte, 0, 4*len(params)), params...) // more room than bytes
	p := ReadParams(in).Rebase(in, a).Rebase(a, b)
	want := ReadParams(b)
	for _, f := range []struct {
		name      string
		got, want []byte
	}{{"Meta", p.Meta, want.Meta}, {"Name", p.Name, want.Name}, {"URI", p.URI, want.URI}, {"Arguments", p.Arguments, want.Arguments},
		{"Version", p.Version, want.Version}, {"LogLevel", p.LogLevel, want.LogLevel}} {
		if !bytes.Equal(f.got, f.want) {
			t.Errorf("%s = %s, want %s", f.name, f.got, f.want)
		}
		if len(f.got) > 0 && &f.got[0] != &f.want[0] {
			t.Errorf("%s is not a span of the last copy", f.name)
		}
	}
	if p.RequestState != nil || p.ClientCapabilities != nil {
		t.Errorf("members that are not there came back: %+v", p)
	}
	for method, want := range map[string]string{"tools/call": `"echo"`, "prompts/get": `"echo"`, "resources/read": `"u"`, "ping": ""} {
		if got := string(p.Named(method)); got != want {
			t.Errorf("Named(%q) = %s, want %s", method, got, want)
		}
	}
}

// TestDecodeString decodes as encoding/json does into a string.
func TestDecodeString(t *testing.T) {
	for _, raw := range []string{`"x"`, `""`, `"a\u00e9\"b"`, `null`, `5`, `{}`, `[]`, `true`} {
		var want string
		wantOK := json.Unmarshal([]byte(raw), &want) == nil
		got, ok := DecodeString(json.RawMessage(raw))
		if got != want || ok != wantOK {
			t.Errorf("DecodeString(%s) = %q, %v; encoding/json: %q, %v", raw, got, ok, want, wantOK)
		}
	}
	if _, ok := DecodeString(nil); ok {
		t.Error("DecodeString(nil) is ok")
	}
}
