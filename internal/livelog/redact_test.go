package livelog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

func parse(t *testing.T, raw string) *jsonrpc.Message {
	t.Helper()
	msg, err := jsonrpc.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("parse %s: %v", raw, err)
	}
	return msg
}

// TestMessageHidesSecretNamedMembers: the log decides by the cassette's
// rule (cassettes.SecretMember), both ways, in a tool's arguments and in
// any other request's params, on the text and on the JSON handler.
func TestMessageHidesSecretNamedMembers(t *testing.T) {
	for _, c := range []struct {
		name   string
		secret bool
	}{
		{"token", true},
		{"github_token", true},
		{"api_token", true},
		{"apiKey", true},
		{"password", true},
		{"credentials", true},
		{"private_key", true},
		{"clientSecret", true},
		{"maxTokens", false},
		{"inputTokens", false},
		{"progressToken", false},
		{"cursor", false},
		{"sessionId", false},
		{"key", false},
	} {
		const value = "v4lue-0123"
		for _, raw := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"` + c.name + `":"` + value + `"}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"` + c.name + `":"` + value + `"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"` + c.name + `":"` + value + `"}}`,
		} {
			for _, h := range []func(*bytes.Buffer) slog.Handler{
				func(b *bytes.Buffer) slog.Handler { return NewTextHandler(b) },
				func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
			} {
				var b bytes.Buffer
				Message(slog.New(h(&b)), ToServer, parse(t, raw), 0, "")
				if shown := strings.Contains(b.String(), value); shown == c.secret {
					t.Errorf("%s: value shown %v, want %v: %s", c.name, shown, !c.secret, b.String())
				}
			}
		}
	}
}

// TestRedactingHidesValues: a logger made by Redacting hides the values of
// its rules (a --forbid value) in every line and attribute: a tool's
// arguments, a result, an error, a line that is not JSON-RPC, a warning,
// string and error attributes; as they are and JSON-escaped.
func TestRedactingHidesValues(t *testing.T) {
	const plain = `plain"value-nobody-would-guess`
	escaped := strings.ReplaceAll(plain, `"`, `\"`)
	rd, err := cassettes.NewRedactor(cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Values: []string{plain, escaped}}))
	if err != nil {
		t.Fatal(err)
	}
	log := func(l *slog.Logger) {
		Message(l, ToServer, parse(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+escaped+`"}}}`), 0, "")
		Message(l, ToClient, parse(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"`+escaped+`"}]}}`), time.Millisecond, "")
		Message(l, ToClient, parse(t, `{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"bad `+escaped+`"}]}}`), 0, "")
		Message(l, ToClient, parse(t, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"unknown `+escaped+`","data":{"x":"`+escaped+`"}}}`), 0, "")
		Message(l, ToServer, parse(t, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"file:///`+escaped+`"}}`), 0, "")
		Raw(l, ToServer, []byte(`{"broken `+plain), "parse error")
		l.Warn(fmt.Sprintf("mcpmock: upstream %s: refused", plain), slog.String("url", plain), slog.Any("err", errors.New(plain)),
			slog.Group("g", slog.String("v", plain)))
		l.With(slog.String("with", plain)).Info("x")
		Warning(l, ToServer, []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"`+escaped+`"}}`), "contract headers", "the Mcp-Name header says "+plain)
	}
	for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
		"text": func(b *bytes.Buffer) slog.Handler { return NewTextHandler(b) },
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			log(Redacting(slog.New(h(&b)), rd))
			out := b.String()
			if strings.Contains(out, "value-nobody") {
				t.Errorf("the value is shown:\n%s", out)
			}
			if n := strings.Count(out, cassettes.Redacted); n < 8 {
				t.Errorf("%d redactions, want 8 or more (one a line):\n%s", n, out)
			}
			if !strings.Contains(out, "echo") || !strings.Contains(out, "-32602") || !strings.Contains(out, "contract headers: the Mcp-Name header says") {
				t.Errorf("the lines are missing:\n%s", out)
			}
		})
	}
}

// viewer is a handler that takes messages whole, as the web view does.
type viewer struct{ slog.Handler }

func (viewer) TakesMessages() bool { return true }

// TestRedactingHidesPaths: the paths of the rules (--redact-path) are paths
// into each whole message, as in the cassette: the line of a message hides
// what they name, in a tool's arguments, another request's params, a
// result and an error, on the text and the JSON handler, and in the whole
// message that the web view takes.
func TestRedactingHidesPaths(t *testing.T) {
	const value = "123-45-6789"
	rd, err := cassettes.NewRedactor(cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Paths: []string{
		"params.arguments.ssn", "params.uri", "result.content.0.text", "result.structuredContent.ssn", "error.message", "error.data.ssn",
	}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{"ssn":"` + value + `","q":"x"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"person://` + value + `"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + value + `"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"ssn":"` + value + `"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + value + `"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no person ` + value + `","data":{"ssn":"` + value + `"}}}`,
	} {
		for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
			"text": func(b *bytes.Buffer) slog.Handler { return NewTextHandler(b) },
			"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
			// The web view's live log: each message whole, as MessageKey.
			"viewer": func(b *bytes.Buffer) slog.Handler { return viewer{slog.NewJSONHandler(b, nil)} },
		} {
			dir := ToClient
			if strings.Contains(raw, `"method"`) {
				dir = ToServer
			}
			var b bytes.Buffer
			Message(Redacting(slog.New(h(&b)), rd), dir, parse(t, raw), 0, "")
			if out := b.String(); strings.Contains(out, value) || !strings.Contains(out, cassettes.Redacted) {
				t.Errorf("%s: %s\nthe line shows the value or no redaction: %s", name, raw, out)
			} else if name == "viewer" && !strings.Contains(out, `"`+MessageKey+`":{"jsonrpc"`) {
				t.Errorf("the viewer got no message: %s", out)
			}
		}
	}
}
