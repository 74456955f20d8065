package cassettes

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// bigMessage returns a tools/call result of about size bytes: an image as
// base64 (standard alphabet, as MCP sends it), then a long text of words.
func bigMessage(size int) json.RawMessage {
	rng := rand.New(rand.NewPCG(1, 2))
	blob := make([]byte, size/2*3/4)
	for i := range blob {
		blob[i] = byte(rng.Uint32())
	}
	words := []string{"the", "weather", "in", "Paris", "is", "sunny", "with", "a", "light", "breeze", "from", "west", "and", "temperatures", "near", "twenty", "degrees", "Bearer?", "see", "https://example.com/a?b=c", "key:", "value."}
	var text strings.Builder
	for text.Len() < size/2 {
		text.WriteString(words[rng.IntN(len(words))])
		text.WriteByte(' ')
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{"content": []any{
		map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(blob)},
		map[string]any{"type": "text", "text": text.String()},
	}}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(msg)
	return bytes.TrimSpace(b.Bytes())
}

// BenchmarkRedactLarge is the redaction of one 10 MiB message (half base64
// image, half text) by the default rules, against a plain copy of the same
// bytes as the baseline.
func BenchmarkRedactLarge(b *testing.B) {
	raw := bigMessage(10 << 20)
	b.Run("redact", func(b *testing.B) {
		rd, err := NewRedactor(DefaultRedactRules())
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			in := Interaction{From: FromServer, Raw: nil, Request: json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`),
				Response: &Message{From: FromServer, Message: bytes.Clone(raw)}}
			rd.RedactInteraction(&in)
		}
	})
	b.Run("baseline-copy", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			_ = bytes.Clone(raw)
		}
	})
}

// BenchmarkRedactCall is the redaction of one ordinary tools/call and its
// answer, against a plain copy of their bytes as the baseline.
func BenchmarkRedactCall(b *testing.B) {
	req := json.RawMessage(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","units":"metric"},"_meta":{"progressToken":12}}}`)
	resp := json.RawMessage(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"Sunny, 22°C in New York; wind 12 km/h from the west."}],"structuredContent":{"temperature":22,"conditions":"sunny"},"isError":false}}`)
	b.Run("redact", func(b *testing.B) {
		rd, err := NewRedactor(DefaultRedactRules())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			in := Interaction{From: FromClient, Request: bytes.Clone(req), Response: &Message{From: FromServer, Message: bytes.Clone(resp)}}
			rd.RedactInteraction(&in)
		}
	})
	b.Run("baseline-copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Interaction{From: FromClient, Request: bytes.Clone(req), Response: &Message{From: FromServer, Message: bytes.Clone(resp)}}
		}
	})
}
