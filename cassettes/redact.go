package cassettes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Redacted replaces a secret in a cassette.
const Redacted = "[REDACTED]"

// RedactedPlaceholder replaces a secret value in a client's request: it is
// the matcher's placeholder for any string, so that the live request, which
// carries the real secret, still matches the redacted recording.
const RedactedPlaceholder = "{{any string}}"

// RedactRules say what a cassette must not hold. The zero value redacts
// nothing; DefaultRedactRules are the rules applied when a cassette is
// saved, and users add their own to them.
//
// A secret found in a client's request (its params) is replaced by
// RedactedPlaceholder, the whole string value (a value at one of Paths by
// "{{any}}"), so that matching keeps working; anywhere else the secret text
// is replaced by Redacted.
type RedactRules struct {
	// Headers are HTTP header and URL query parameter names (any case)
	// whose values are secrets.
	Headers []string `json:"headers,omitempty"`
	// Members are JSON object member names (any case; "-" and "_" are
	// ignored, so "apiKey" also names "api_key") whose string values, in
	// any message, are secrets.
	Members []string `json:"members,omitempty"`
	// Paths are gjson paths into each JSON-RPC message
	// ("params.arguments.token", "result.content.#.text"): the values there
	// are secrets, whatever their type.
	Paths []string `json:"paths,omitempty"`
	// Values are literal secrets, replaced wherever they occur.
	Values []string `json:"values,omitempty"`
	// Patterns are regular expressions (Go syntax) of secret text. When a
	// pattern has a capturing group, only the text of the first group is
	// replaced (so "[?&]key=([^&]+)" keeps the parameter's name).
	Patterns []string `json:"patterns,omitempty"`
	// SecretLikeNames also treats API-key-like names as secret headers and
	// query parameters (SecretName: x-api-key, *-token, *-secret,
	// *password*...) and members (SecretMember: token, github_token,
	// apiKey, clientSecret, password, credentials...).
	SecretLikeNames bool `json:"secretLikeNames,omitempty"`
}

// DefaultRedactRules returns the rules that mcpmock applies by default: the
// credential headers (Authorization, Proxy-Authorization, Cookie,
// Set-Cookie) and Mcp-Session-Id, API-key-like header, query parameter and
// member names, a password in a URL, and the text of well-known token
// formats (bearer tokens, JWTs, OpenAI and Anthropic keys "sk-...", GitHub
// tokens, AWS access key ids, Slack and Google API keys, PEM private keys).
func DefaultRedactRules() *RedactRules {
	return &RedactRules{
		Headers:         []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", mcp.HeaderSessionID},
		SecretLikeNames: true,
		Patterns: []string{
			`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)`,
			`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`,
			`\bsk-[A-Za-z0-9_-]{20,}`,
			`\bgh[pousr]_[A-Za-z0-9]{30,}`,
			`\bgithub_pat_[A-Za-z0-9_]{22,}`,
			`\bAKIA[0-9A-Z]{16}\b`,
			`\bxox[abposr]-[A-Za-z0-9-]{10,}`,
			`\bAIza[0-9A-Za-z_-]{35}`,
			`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`,
			`(?i)[?&](?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|sig|signature|key)=([^&#\s"]+)`,
			`[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"]+:([^/\s@"]+)@`,
		},
	}
}

// Merge returns the rules of r with those of more added; a rule that both
// hold is kept once.
func (r *RedactRules) Merge(more *RedactRules) *RedactRules {
	out := &RedactRules{}
	for _, x := range []*RedactRules{r, more} {
		if x == nil {
			continue
		}
		out.Headers = appendNew(out.Headers, x.Headers)
		out.Members = appendNew(out.Members, x.Members)
		out.Paths = appendNew(out.Paths, x.Paths)
		out.Values = appendNew(out.Values, x.Values)
		out.Patterns = appendNew(out.Patterns, x.Patterns)
		out.SecretLikeNames = out.SecretLikeNames || x.SecretLikeNames
	}
	return out
}

// appendNew appends the elements of more that are not in s yet.
func appendNew(s, more []string) []string {
	for _, v := range more {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

// Check reports the first rule that is not valid: a bad regular
// expression, an empty value or path.
func (r *RedactRules) Check() error {
	_, err := NewRedactor(r)
	return err
}

// Redact applies the rules to the cassette in place and returns how many
// values it replaced. Messages are replaced, never changed in place, so a
// cassette that shares messages with another (a snapshot) may be redacted.
// Invalid rules (see Check) are skipped.
func (c *Cassette) Redact(rules *RedactRules) (changes int) {
	rd, _ := newRedactor(rules, true)
	return rd.Redact(c)
}

// Secret is a secret that the rules found in a cassette.
type Secret struct {
	// Interaction is the index of the interaction in Interactions; -1 for
	// the cassette's meta.
	Interaction int
	// Where names the place: "request params.arguments.apiKey",
	// "response result.content.0.text", "http.requestHeaders.X-Api-Key",
	// "meta.server[1]".
	Where string
	// Rule says which rule found it.
	Rule string
}

// Secrets returns the secrets that the rules find in the cassette, without
// changing it.
func (c *Cassette) Secrets(rules *RedactRules) []Secret {
	rd, _ := newRedactor(rules, true)
	var out []Secret
	rd.find = func(s Secret) { out = append(out, s) }
	cc := *c
	cc.Interactions = slices.Clone(c.Interactions)
	cc.Meta.Server = slices.Clone(c.Meta.Server)
	rd.Redact(&cc)
	return out
}

// Redactor applies compiled RedactRules, remembering what it did to each
// message, so that a recording that saves a growing cassette again and again
// redacts each message once.
type Redactor struct {
	rules   RedactRules
	headers map[string]bool
	members map[string]bool
	// fold is the scratch of secretMemberBytes, edits message's.
	fold     []byte
	edits    []edit
	patterns []*pattern
	values   []string
	// short, when not nil, marks the bytes of which every match of a
	// pattern and every literal value holds one (pattern.needs, a value's
	// first byte): a short string that holds none needs no scan (clear).
	short *[256]bool
	// cache maps a message's bytes (by address and length: recorded
	// messages never change) to its redacted form.
	cache map[msgKey]json.RawMessage
	// find, when set, receives each secret instead of counting changes.
	find func(Secret)
	// uncached says message does not use cache (RedactInteraction).
	uncached bool
	// value says message redacts a value shown apart from its message
	// (RedactValue): no member is the message's own, and no path applies.
	value bool
	at    int
	part  string
	// scratches are copies of the redactor for RedactJSON and RedactText
	// (scratch), kept for the next call: the live log calls both for
	// every message, and a new copy each time was most of what the log of
	// a message allocated.
	scratches *sync.Pool
}

type msgKey struct {
	p *byte
	n int
}

// DefaultRedactor returns the redactor of DefaultRedactRules, compiled on
// first use and shared: what a process shows of messages with no rules of
// its own (the live log, a miss's explanation) hides what these rules know.
// Its methods that are safe for concurrent use (RedactJSON, RedactText)
// change nothing in it.
var DefaultRedactor = sync.OnceValue(func() *Redactor {
	rd, err := NewRedactor(DefaultRedactRules())
	if err != nil {
		panic("cassettes: the default redaction rules do not compile: " + err.Error())
	}
	return rd
})

// NewRedactor compiles rules; nil rules redact nothing.
func NewRedactor(rules *RedactRules) (*Redactor, error) {
	return newRedactor(rules, false)
}

func newRedactor(rules *RedactRules, lenient bool) (*Redactor, error) {
	rd := &Redactor{headers: map[string]bool{}, members: map[string]bool{}, cache: map[msgKey]json.RawMessage{}, scratches: new(sync.Pool)}
	if rules == nil {
		return rd, nil
	}
	rd.rules = *rules
	for _, h := range rules.Headers {
		rd.headers[strings.ToLower(h)] = true
	}
	for _, m := range rules.Members {
		rd.members[memberKey(m)] = true
	}
	for _, p := range rules.Patterns {
		re, err := compilePattern(p)
		if err != nil {
			if lenient {
				continue
			}
			return nil, fmt.Errorf("redaction pattern %q: %w", p, err)
		}
		rd.patterns = append(rd.patterns, re)
	}
	for _, v := range rules.Values {
		if v == "" {
			if lenient {
				continue
			}
			return nil, fmt.Errorf("redaction value: an empty value")
		}
		rd.values = append(rd.values, v)
	}
	rd.short = shortFilter(rd.patterns, rd.values)
	for _, p := range rules.Paths {
		if strings.TrimSpace(p) == "" {
			if lenient {
				continue
			}
			return nil, fmt.Errorf("redaction path: an empty path")
		}
	}
	return rd, nil
}

// Redact applies the rules to c in place and returns how many values it
// replaced.
func (rd *Redactor) Redact(c *Cassette) (changes int) {
	n := rd.redactMeta(c)
	for i := range c.Interactions {
		rd.at = i
		n += rd.interaction(&c.Interactions[i])
	}
	return n
}

// redactMeta redacts the server's command line or URL in c.Meta.
func (rd *Redactor) redactMeta(c *Cassette) int {
	n := 0
	rd.at = -1
	if rd.rules.SecretLikeNames { // redact_args.go
		if args, k := RedactArgs(c.Meta.Server); k > 0 {
			for i := range args {
				if args[i] != c.Meta.Server[i] {
					rd.report(fmt.Sprintf("meta.server[%d]", i), "secret-like name")
				}
			}
			c.Meta.Server = args
			n += k
		}
	}
	for i, s := range c.Meta.Server {
		rd.part = fmt.Sprintf("meta.server[%d]", i)
		if out, k := rd.text(s); k > 0 {
			c.Meta.Server[i] = out
			n += k
		}
	}
	return n
}

// RedactInteraction applies the rules to one interaction in place (its
// messages are replaced, not changed) and returns how many values it
// replaced. It remembers nothing: a recorder redacts each interaction once,
// when it is final.
func (rd *Redactor) RedactInteraction(in *Interaction) int {
	rd.at, rd.uncached = -1, true
	defer func() { rd.uncached = false }()
	return rd.interaction(in)
}

// RedactJSON returns the JSON text raw (a message, its params or its
// result) with every secret that the rules know replaced by Redacted, and
// how many it replaced; raw itself is returned when there are none. Unlike
// the other methods it remembers nothing and is safe for concurrent use:
// the live log calls it from every goroutine that logs. raw must be valid
// JSON.
func (rd *Redactor) RedactJSON(raw []byte) ([]byte, int) {
	if len(raw) == 0 {
		return raw, 0
	}
	c := rd.scratch()
	defer rd.release(c)
	return c.message(raw, false)
}

// RedactValue returns the JSON value raw, shown apart from the message
// that holds it (a request's arguments, a result), with every secret that
// the rules know inside it replaced as RedactJSON replaces it in the whole
// message, and how many it replaced; raw itself when there are none. The
// rules' paths, which are paths into a whole message, are not applied,
// nor the rule of the member that holds raw: Local says when a value can
// be redacted apart. It is safe for concurrent use. raw must be valid
// JSON.
func (rd *Redactor) RedactValue(raw []byte) ([]byte, int) {
	if len(raw) == 0 {
		return raw, 0
	}
	c := rd.scratch()
	defer rd.release(c)
	if v := bytes.TrimSpace(raw); len(v) > 0 && v[0] == '"' {
		// A string alone: its text, as the walk of a message reads the
		// strings inside it (a result may be one).
		s, ok := jsonrpc.UnquoteView(v)
		if !ok {
			return raw, 0
		}
		if out, n := c.text(s); n > 0 {
			return quote(out), n
		}
		return raw, 0
	}
	c.value = true
	return c.message(raw, false)
}

// Local reports whether the rules hide the same in a value redacted apart
// (RedactValue, RedactText) as in the whole message that holds it under
// the members names: they have no paths, and none of names is a secret's.
// What a message's log line shows of it (its arguments, the text of its
// result) is redacted apart when the rules are local to those members;
// most messages hide no secret, and the line's few short parts cost less
// to look at than the whole message.
func (rd *Redactor) Local(names ...string) bool {
	if len(rd.rules.Paths) > 0 {
		return false
	}
	for _, n := range names {
		if rd.secretMember(n) {
			return false
		}
	}
	return true
}

// RedactText returns s with the literal values and the patterns of the
// rules replaced by Redacted, and how many it replaced. It is safe for
// concurrent use.
func (rd *Redactor) RedactText(s string) (string, int) {
	c := rd.scratch()
	defer rd.release(c)
	return c.text(s)
}

// scratch returns a copy of rd that shares the compiled rules, which no
// method changes, and has its own scratch and no cache; release gives it
// back. What the copy's methods return never shares its scratch.
func (rd *Redactor) scratch() *Redactor {
	if rd.scratches != nil {
		if c, ok := rd.scratches.Get().(*Redactor); ok {
			return c
		}
	}
	c := *rd
	c.fold, c.edits, c.cache, c.find, c.uncached, c.at = nil, nil, nil, nil, true, -1
	return &c
}

// release keeps a copy that scratch returned for the next call.
func (rd *Redactor) release(c *Redactor) {
	if rd.scratches != nil {
		c.part, c.value = "", false
		rd.scratches.Put(c)
	}
}

func (rd *Redactor) report(where, rule string) {
	if rd.find != nil {
		rd.find(Secret{Interaction: rd.at, Where: where, Rule: rule})
	}
}
