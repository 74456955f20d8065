package replayer

import (
	"bytes"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// TestParamsOfIsByContent: the memo answers with spans of the params it
// is given, never of a buffer it read before, and reads params anew once
// their bytes change in the same buffer (a line buffer reused).
func TestParamsOfIsByContent(t *testing.T) {
	e, err := New(cassettes.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession()
	const first = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo"}`
	const second = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},"name":"echo"}`
	buf := []byte(first)
	if v := s.paramsOf(buf).ProtocolVersion(); v != mcp.Version20260728 {
		t.Fatalf("ProtocolVersion() = %q", v)
	}
	other := []byte(first) // the same bytes elsewhere
	p := s.paramsOf(other)
	if want := mcp.ReadParams(other); !bytes.Equal(p.Name, want.Name) || !bytes.Equal(p.Version, want.Version) {
		t.Errorf("paramsOf = %+v, want %+v", p, want)
	}
	if &p.Name[0] != &other[bytes.Index(other, []byte(`"echo"`))] {
		t.Error("paramsOf answers with a span of another buffer than the params it was given")
	}
	copy(buf, second) // the buffer now holds the next request
	if v := s.paramsOf(buf).ProtocolVersion(); v != mcp.Version20251125 {
		t.Errorf("after the buffer changed, ProtocolVersion() = %q, want %q", v, mcp.Version20251125)
	}
	big := append([]byte(`{"name":"echo","arguments":{"x":"`), bytes.Repeat([]byte("a"), maxMemoParams)...)
	big = append(big, `"}}`...)
	if p := s.paramsOf(big); string(p.Name) != `"echo"` {
		t.Errorf("the params of a large request: Name = %s", p.Name)
	}
}

// TestKnowParams: params a front end read, put in the memo, are answered
// from it as spans of the params asked for, and the memo keeps its own
// copy: the body they were read from may change after.
func TestKnowParams(t *testing.T) {
	e, err := New(cassettes.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession()
	body := []byte(`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo"}}`)
	params := body[len(`{"params":`) : len(body)-1]
	s.knowParams(params, mcp.ReadParams(params))
	line := append([]byte(nil), params...) // the same params, elsewhere
	copy(body, bytes.Repeat([]byte("x"), len(body)))
	p := s.paramsOf(line)
	if string(p.Name) != `"echo"` || p.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("paramsOf after knowParams = %+v", p)
	}
	if &p.Name[0] != &line[bytes.Index(line, []byte(`"echo"`))] {
		t.Error("paramsOf answers with a span of another buffer than the params it was given")
	}
}
