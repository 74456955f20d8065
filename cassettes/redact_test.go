package cassettes

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const secretCassette = `{
  "version": 1,
  "meta": {"server": ["https://api.example.com/mcp?api_key=abc123&region=eu", "https://bob:hunter2@example.com/mcp"]},
  "interactions": [
    {"from": "client", "atMs": 1.5,
     "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "login", "arguments": {"user": "bob", "apiKey": "k-12345", "note": "uses Bearer abcdefghijklmnop"}}},
     "response": {"from": "server", "atMs": 2.5, "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "token sk-abcdefghijklmnopqrstuvwxyz0123 issued; progressToken stays"}], "accessToken": "zzz", "progressToken": "p1"}}},
     "http": {"url": "/mcp?tenant=my-literal-secret&x=1", "requestHeaders": {"X-Api-Key": "k-12345", "Content-Type": "application/json"}}},
    {"from": "client", "atMs": 3, "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "my-literal-secret here", "pin": 1234}}},
     "response": {"from": "server", "atMs": 4, "message": {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "my-literal-secret here"}]}}}}
  ]
}`

func TestRedact(t *testing.T) {
	c, err := Parse("secret.json", []byte(secretCassette))
	if err != nil {
		t.Fatal(err)
	}
	rules := DefaultRedactRules().Merge(&RedactRules{Values: []string{"my-literal-secret"}, Paths: []string{"params.arguments.pin"}})
	if err := rules.Check(); err != nil {
		t.Fatal(err)
	}
	found := c.Secrets(rules)
	if len(found) == 0 {
		t.Fatal("Secrets found nothing")
	}
	before, _ := Encode(c)
	n := c.Redact(rules)
	after, _ := Encode(c)
	if n != len(found) {
		t.Errorf("Redact changed %d values, Secrets found %d: %v", n, len(found), found)
	}
	for _, secret := range []string{"abc123", "hunter2", "k-12345", "abcdefghijklmnop", "sk-abc", `"zzz"`, "my-literal-secret", "1234"} {
		if !strings.Contains(string(before), secret) {
			t.Errorf("the test cassette lacks %q", secret)
		}
		if strings.Contains(string(after), secret) {
			t.Errorf("the redacted cassette still holds %q:\n%s", secret, after)
		}
	}
	for _, kept := range []string{`"progressToken": "p1"`, "region=eu", `"user": "bob"`, "issued; progressToken stays", `"Content-Type": "application/json"`, "&x=1"} {
		if !strings.Contains(string(after), kept) {
			t.Errorf("the redacted cassette lost %q:\n%s", kept, after)
		}
	}
	// In a client request a secret becomes the any-string placeholder, so
	// the live request still matches; elsewhere it becomes [REDACTED].
	req := string(c.Interactions[0].Request)
	if !strings.Contains(req, `"apiKey":"{{any string}}"`) || !strings.Contains(req, `"note":"{{any string}}"`) {
		t.Errorf("request: %s", req)
	}
	if resp := string(c.Interactions[0].Response.Message); !strings.Contains(resp, `"text":"token [REDACTED] issued`) {
		t.Errorf("response: %s", resp)
	}
	// Redacting again changes nothing.
	if n := c.Redact(rules); n != 0 {
		t.Errorf("a second Redact changed %d values", n)
	}
	if again := c.Secrets(rules); len(again) != 0 {
		t.Errorf("secrets left: %v", again)
	}
}

func TestRedactorCacheAndSharing(t *testing.T) {
	c, err := Parse("secret.json", []byte(secretCassette))
	if err != nil {
		t.Fatal(err)
	}
	orig := string(c.Interactions[0].Request)
	snap := *c
	snap.Interactions = append([]Interaction(nil), c.Interactions...)
	snap.Meta.Server = append([]string(nil), c.Meta.Server...)
	f, err := NewFinisher(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Finish(&snap)
	if string(c.Interactions[0].Request) != orig {
		t.Error("Finish changed the original's message in place")
	}
	first, _ := Encode(&snap)
	snap2 := *c
	snap2.Interactions = append([]Interaction(nil), c.Interactions...)
	snap2.Meta.Server = append([]string(nil), c.Meta.Server...)
	f.Finish(&snap2)
	second, _ := Encode(&snap2)
	if diff := cmp.Diff(string(first), string(second)); diff != "" {
		t.Errorf("finishing twice differs (-first +second):\n%s", diff)
	}
	if strings.Contains(string(first), `"atMs": 1.5`) {
		t.Error("timing kept")
	}
}

func TestRedactRulesCheck(t *testing.T) {
	if err := (&RedactRules{Patterns: []string{"("}}).Check(); err == nil {
		t.Error("a bad pattern passes Check")
	}
	if err := (&RedactRules{Values: []string{""}}).Check(); err == nil {
		t.Error("an empty value passes Check")
	}
}

// TestRedactMemberNamesFolded checks the member names that are secrets'
// however they are written (case, "-" and "_", the two letters outside
// ASCII that lower to ASCII ones), next to names that are not, so that the
// quick scan that lets most messages skip the walk never skips a secret.
func TestRedactMemberNamesFolded(t *testing.T) {
	rd, err := NewRedactor(DefaultRedactRules().Merge(&RedactRules{Members: []string{"My-Field"}}))
	if err != nil {
		t.Fatal(err)
	}
	secret := []string{"apiKey", "API_Key", "x-api-key", "client_secret", "Pass_Word", "passwd", "ACCESS-token",
		"api\u212aey", "\u0130d_token", "myfield", "MY_FIELD", "set-cookie", "Authorization", "aws_secret_access_key", "private-key", "ssh_private_key"}
	kept := []string{"progressToken", "cursor", "tokenCount", "keyboard", "author", "monkey"}
	for _, name := range append(secret, kept...) {
		msg := `{"jsonrpc":"2.0","id":1,"result":{"content":[],"` + name + `":"v4lue"}}`
		in := Interaction{From: FromClient, Request: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			Response: &Message{From: FromServer, Message: []byte(msg)}}
		rd.RedactInteraction(&in)
		redacted := !strings.Contains(string(in.Response.Message), "v4lue")
		if want := !slices.Contains(kept, name); redacted != want {
			t.Errorf("member %q: redacted %v, want %v: %s", name, redacted, want, in.Response.Message)
		}
	}
}

// TestMayHoldSecretMemberLooksAtNames checks the quick scan that lets most
// messages skip the walk: it answers yes for every secret member name,
// however spaced or escaped, and no for a secret-like word that is only a
// value.
func TestMayHoldSecretMemberLooksAtNames(t *testing.T) {
	rd, err := NewRedactor(DefaultRedactRules())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{`{"apiKey":"x"}`, true},
		{`{"a":{"b":[{"Client_Secret" : "x"}]}}`, true},
		{"{\"pass\\u0077ord\":\"x\"}", true}, // an escape: cannot tell cheaply
		{`{"note":"say \"hi\"","token":1}`, true},
		{`{"type":"password","text":"apiKey: none"}`, false},
		{`{"progressToken":1,"cursor":"c"}`, false},
		{`{"api\u212aey":"x"}`, true},
		{`not json "apikey"`, false},
		{`{"apikey"`, false},
		{`{"apikey":`, true},
		{`{"url":"http://h:8080/x","when":"12:30","token"` + " \n\t:" + `"y"}`, true}, // colons in values, then a spaced name
		{`{"t":":apikey","u":"a:b:c","v":"password:"}`, false},                        // colons inside values only
		{`{"":"x","n":{"":1}}`, false},
		{`apikey":1`, true}, // not JSON: a name's end without its start
	} {
		if got := rd.mayHoldSecretMember([]byte(c.raw)); got != c.want {
			t.Errorf("mayHoldSecretMember(%s) = %v, want %v", c.raw, got, c.want)
		}
	}
	none, err := NewRedactor(&RedactRules{})
	if err != nil {
		t.Fatal(err)
	}
	if none.mayHoldSecretMember([]byte(`{"apiKey":"x"}`)) {
		t.Error("a redactor with no member rules found a secret member")
	}
}

// TestMayHoldSecretMemberNeverMissesOne generates messages with member
// names written every which way (case, "-" and "_", white space around the
// colon, nesting, secret-like words as values) and checks that whenever a
// walk of the message would meet a secret member name, the quick scan said
// the message may hold one.
func TestMayHoldSecretMemberNeverMissesOne(t *testing.T) {
	rd, err := NewRedactor(DefaultRedactRules().Merge(&RedactRules{Members: []string{"My-Field"}}))
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"apiKey", "api_key", "X-Api-Key", "clientSecret", "password", "Pass_Word", "accessToken",
		"progressToken", "cursor", "myField", "MY-FIELD", "keyboard", "name", "text", "authorization", "Set-Cookie",
		"tokenCount", "secret", "meta", "aws_secret_access_key"}
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		w := []byte(words[rnd.IntN(len(words))])
		for i := range w {
			if rnd.IntN(4) == 0 && w[i] >= 'a' && w[i] <= 'z' {
				w[i] -= 'a' - 'A'
			}
		}
		return string(w)
	}
	var value func(b *strings.Builder, depth int)
	value = func(b *strings.Builder, depth int) {
		switch k := rnd.IntN(4); {
		case k == 0 || depth > 3:
			b.WriteString(strconv.Quote(word()))
		case k == 1:
			b.WriteString("[")
			for i := range rnd.IntN(3) {
				if i > 0 {
					b.WriteString(",")
				}
				value(b, depth+1)
			}
			b.WriteString("]")
		default:
			b.WriteString("{")
			for i := range rnd.IntN(4) {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(strconv.Quote(word()))
				b.WriteString([]string{":", " :", ": ", "\n:\t"}[rnd.IntN(4)])
				value(b, depth+1)
			}
			b.WriteString("}")
		}
	}
	secrets := 0
	for range 5000 {
		var b strings.Builder
		value(&b, 0)
		raw := []byte(b.String())
		if !json.Valid(raw) {
			t.Fatalf("generated invalid JSON: %s", raw)
		}
		secret := false
		walkStrings(raw, func(path []string, start, end int) {
			for _, name := range path {
				if rd.secretMember(name) {
					secret = true
				}
			}
		})
		if secret && !rd.mayHoldSecretMember(raw) {
			t.Fatalf("the quick scan missed a secret member in %s", raw)
		}
		if secret {
			secrets++
		}
	}
	if secrets < 500 {
		t.Fatalf("only %d of 5000 messages held a secret member: the test checks too little", secrets)
	}
}

// RedactValue redacts a value shown apart from its message: a string alone
// (a result may be one), and an object whose members named jsonrpc or
// method are no message's own; the rules' paths, into whole messages, are
// not applied.
func TestRedactValue(t *testing.T) {
	rd, err := NewRedactor(DefaultRedactRules().Merge(&RedactRules{Paths: []string{"text"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{`"line\nsk-abcdefghijklmnopqrstuvwxyz"`, `"line\n[REDACTED]"`},
		{`"plain"`, `"plain"`},
		{`{"method":{"password":"pw"},"jsonrpc":"Bearer abcdefghijkl","text":"t"}`, `{"method":{"password":"[REDACTED]"},"jsonrpc":"Bearer [REDACTED]","text":"t"}`},
		{`["AKIAABCDEFGHIJKLMNOP",2]`, `["[REDACTED]",2]`},
		{`42`, `42`},
	} {
		got, n := rd.RedactValue([]byte(c.in))
		if string(got) != c.want || (n > 0) != (c.in != c.want) {
			t.Errorf("RedactValue(%s) = %s, %d; want %s", c.in, got, n, c.want)
		}
	}
}
