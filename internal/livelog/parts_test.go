package livelog

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// partsCorpus are messages with secrets in every place that a line shows:
// the id, a tool's name and arguments (a member named "method" too, which
// a message's own method is not), another request's params, an error's
// message, a tool error's text (the token after a line break, which the
// line shows escaped), the text and type of a result's content, a result
// without content, and an invalid message.
var partsCorpus = []string{
	`{"jsonrpc":"2.0","id":"sk-abcdefghijklmnopqrstuvwxyz","method":"ping"}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ghp_abcdefghijklmnopqrstuvwxyz0123456789","arguments":{"q":"x"}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"token":"meta-secret"},"name":"t","arguments":{"apiKey":"k-123","method":{"password":"pw-1"},"n":{"password":[1,2]},"s":"hunter2!"}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"https://user:pa55word@example.com/x?api_key=abc123&b=1"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"credentials":{"user":"u","pass":"p"},"text":"AKIAABCDEFGHIJKLMNOP"}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"bad key sk-abcdefghijklmnopqrstuvwxyz\nmore","data":{"token":"t"}}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"isError":true,"content":[{"type":"text","text":"failed:\nsk-abcdefghijklmnopqrstuvwxyz hunter2!"}]}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"the key is xoxb-0123456789abc"},{"type":"image","mimeType":"image/png?sig=abcdef","data":"x"}]}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"_meta":{"x":1},"client_secret":"cs-1","nested":{"auth":"Bearer abcdefghijkl"}}}`,
	`{"jsonrpc":"2.0","id":7,"result":"eyJabcdefghij.eyJabcdefghij.abcdefghij"}`,
	`{"jsonrpc":"2.0","id":7,"result":"line\nsk-abcdefghijklmnopqrstuvwxyz"}`,
	`{"jsonrpc":"2.0","id":7,"method":"notifications/message","params":{"data":"sk-abcdefghijklmnopqrstuvwxyz"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"text":"line\nsk-abcdefghijklmnopqrstuvwxyz"}}}`,
	`{"jsonrpc":"2.0","id":"a\"b hunter2!","method":"x","params":{"k":"v"}}`,
	`{"jsonrpc":"2.0","id":7}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"text":"-----BEGIN RSA PRIVATE KEY-----` + strings.Repeat("A", 700) + `-----END RSA PRIVATE KEY-----"}}}`,
}

// partsRules are rules whose lines are redacted in parts (local) and
// rules whose lines are redacted whole.
var partsRules = []*cassettes.RedactRules{
	cassettes.DefaultRedactRules(),
	cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Values: []string{"hunter2!"}, Members: []string{"pass"}}),
	cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Patterns: []string{`k-[0-9]+`}}),
	cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Paths: []string{"params.arguments.q"}}),
	cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Members: []string{"text"}}),
}

// sameLine checks that the line of raw is the one of the message redacted
// whole, where rd's rules let the text log redact what it shows in parts,
// and returns it.
func sameLine(t testing.TB, rd *cassettes.Redactor, raw string) string {
	msg, err := jsonrpc.Parse([]byte(raw))
	if err != nil {
		return ""
	}
	local := rd.Local(lineMembers...)
	whole, wl := appendLine(nil, shown{rd: rd, whole: true}, ToClient, redactMessage(rd, msg), time.Millisecond, "n")
	parts, pl := appendLine(nil, shown{rd: rd, whole: !local}, ToClient, msg, time.Millisecond, "n")
	if !local {
		parts, pl = whole, wl
	}
	if string(parts) != string(whole) || pl != wl {
		t.Fatalf("%s:\nin parts %q (%v)\nwhole    %q (%v)", raw, parts, pl, whole, wl)
	}
	return string(whole)
}

// A text log redacts each part it shows apart where the rules allow it
// (no paths, no secret name on the way to a part): the line is the one of
// the message redacted whole, and shows none of the secrets.
func TestLinePartsRedactedAsWhole(t *testing.T) {
	secrets := []string{"abcdefghijklmnopqrstuvwxyz", "pa55word", "abc123", "AKIAABCDEFGHIJKLMNOP", "xoxb-", "cs-1",
		"abcdefghijkl", "pw-1", "sig=abcdef", "eyJabcdefghij", "AAAAAAAA"}
	locals := 0
	for _, rules := range partsRules {
		secrets := append(slices.Clone(secrets), rules.Values...) // the rules' own values too
		rd, err := cassettes.NewRedactor(rules)
		if err != nil {
			t.Fatal(err)
		}
		if rd.Local(lineMembers...) {
			locals++
		}
		for _, raw := range partsCorpus {
			line := sameLine(t, rd, raw)
			for _, s := range secrets {
				if strings.Contains(line, s) {
					t.Errorf("rules %v: the line of %s shows %q: %s", rules, raw, s, line)
				}
			}
		}
	}
	if locals != 3 {
		t.Errorf("%d of the rules are local, want 3", locals)
	}
}

// FuzzLineParts: whatever the message, the line of its parts redacted apart
// is the line of the message redacted whole.
func FuzzLineParts(f *testing.F) {
	for _, raw := range partsCorpus {
		f.Add(raw)
	}
	rds := make([]*cassettes.Redactor, 0, len(partsRules))
	for _, rules := range partsRules {
		rd, err := cassettes.NewRedactor(rules)
		if err != nil {
			f.Fatal(err)
		}
		rds = append(rds, rd)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, rd := range rds {
			sameLine(t, rd, raw)
		}
	})
}

// TestLinePartsRandomMessages: messages made at random (strings of one to
// three pieces) of the pieces that
// redaction looks at (secret names and tokens, escapes, a line break before
// a token, text that is not UTF-8, redacted values, schema maps, members
// named like a message's own) give the same line in parts as whole.
func TestLinePartsRandomMessages(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	texts := []string{"m0", "echo", "sk-abcdefghijklmnopqrstuvwxyz", `line\nsk-abcdefghijklmnopqrstuvwxyz`, `a\"b`, `\u00e9`, "\xff\xfe",
		"Bearer abcdefghijkl", "hunter2!", "[REDACTED]", "{{any string}}", "https://u:p@h/x?token=t&b=1", "AKIAABCDEFGHIJKLMNOP", "",
		"eyJabcdefgh.eyJabcdefgh.abcdefgh", "k-123", "\xff\xfesk-abcdefghijklmnopqrstuvwxyz", "-----BEGIN RSA PRIVATE KEY-----x-----END RSA PRIVATE KEY-----"}
	names := []string{"text", "token", "apiKey", "method", "jsonrpc", "name", "q", "properties", "_meta", "password", "pass", "content", "type", "isError", "uri"}
	var value func(depth int) string
	value = func(depth int) string {
		switch k := rng.IntN(7); {
		case k < 3 || depth > 2:
			var b strings.Builder
			for range 1 + rng.IntN(3) {
				b.WriteString(texts[rng.IntN(len(texts))])
			}
			return `"` + b.String() + `"`
		case k == 3:
			return []string{"1", "true", "null", "-2.5"}[rng.IntN(4)]
		case k == 4:
			var b strings.Builder
			b.WriteByte('[')
			for i := range rng.IntN(3) {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(value(depth + 1))
			}
			return b.String() + "]"
		}
		var b strings.Builder
		b.WriteByte('{')
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + names[rng.IntN(len(names))] + `":` + value(depth+1))
		}
		return b.String() + "}"
	}
	block := func() string {
		return `{"type":` + value(3) + `,"text":` + value(3) + `,"mimeType":` + value(3) + `}`
	}
	kinds := []func() string{
		func() string {
			return `{"jsonrpc":"2.0","id":` + value(3) + `,"method":"tools/call","params":{"name":` + value(3) + `,"arguments":` + value(1) + `,"_meta":` + value(1) + `}}`
		},
		func() string { return `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":` + value(0) + `}` },
		func() string { return `{"jsonrpc":"2.0","id":1,"result":` + value(0) + `}` },
		func() string {
			return `{"jsonrpc":"2.0","id":1,"result":{"isError":` + []string{"true", "false"}[rng.IntN(2)] + `,"content":[` + block() + `,` + block() + `]}}`
		},
		func() string {
			return `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":` + value(3) + `,"data":` + value(1) + `}}`
		},
		func() string { return `{"jsonrpc":"2.0","method":"notifications/progress","params":` + value(0) + `}` },
	}
	var rds []*cassettes.Redactor
	for _, rules := range partsRules {
		rd, err := cassettes.NewRedactor(rules)
		if err != nil {
			t.Fatal(err)
		}
		rds = append(rds, rd)
	}
	parsed := 0
	for range 12000 {
		raw := kinds[rng.IntN(len(kinds))]()
		for _, rd := range rds {
			if sameLine(t, rd, raw) != "" {
				parsed++
			}
		}
	}
	if parsed < 12000 {
		t.Errorf("only %d of the random messages parsed", parsed)
	}
}
