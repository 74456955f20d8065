package cassettes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"

	"github.com/tidwall/gjson"
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
	// cache maps a message's bytes (by address and length: recorded
	// messages never change) to its redacted form.
	cache map[msgKey]json.RawMessage
	// find, when set, receives each secret instead of counting changes.
	find func(Secret)
	// uncached says message does not use cache (RedactInteraction).
	uncached bool
	at       int
	part     string
}

type msgKey struct {
	p *byte
	n int
}

// NewRedactor compiles rules; nil rules redact nothing.
func NewRedactor(rules *RedactRules) (*Redactor, error) {
	return newRedactor(rules, false)
}

func newRedactor(rules *RedactRules, lenient bool) (*Redactor, error) {
	rd := &Redactor{headers: map[string]bool{}, members: map[string]bool{}, cache: map[msgKey]json.RawMessage{}}
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
	return rd.scratch().message(raw, false)
}

// RedactText returns s with the literal values and the patterns of the
// rules replaced by Redacted, and how many it replaced. It is safe for
// concurrent use.
func (rd *Redactor) RedactText(s string) (string, int) {
	return rd.scratch().text(s)
}

// scratch returns a copy of rd that shares the compiled rules, which no
// method changes, and has its own scratch and no cache.
func (rd *Redactor) scratch() *Redactor {
	c := *rd
	c.fold, c.edits, c.cache, c.find, c.uncached, c.at = nil, nil, nil, nil, true, -1
	return &c
}

func (rd *Redactor) interaction(in *Interaction) int {
	n := 0
	msg := func(part string, raw *json.RawMessage, request bool) {
		if *raw == nil {
			return
		}
		rd.part = part
		out, k := rd.message(*raw, request)
		if k > 0 {
			*raw = out
			n += k
		}
	}
	rawText := func(part string, s **string) {
		if *s == nil {
			return
		}
		rd.part = part
		if out, k := rd.text(**s); k > 0 {
			*s = &out
			n += k
		}
	}
	msg("request", &in.Request, in.From == FromClient)
	msg("notification", &in.Notification, false)
	rawText("raw", &in.Raw)
	if len(in.Exchange) > 0 {
		ex := slices.Clone(in.Exchange)
		changed := n
		for j := range ex {
			msg(fmt.Sprintf("exchange[%d]", j), &ex[j].Message, false)
			rawText(fmt.Sprintf("exchange[%d].raw", j), &ex[j].Raw)
		}
		if n > changed {
			in.Exchange = ex
		}
	}
	if in.Response != nil {
		m, raw := in.Response.Message, in.Response.Raw
		before := n
		msg("response", &m, false)
		rawText("response.raw", &raw)
		if n > before {
			r := *in.Response // only a changed response is copied
			r.Message, r.Raw = m, raw
			in.Response = &r
		}
	}
	if in.HTTP != nil {
		h := *in.HTTP
		before := n
		h.RequestHeaders = rd.headerMap("http.requestHeaders", h.RequestHeaders, &n)
		h.ResponseHeaders = rd.headerMap("http.responseHeaders", h.ResponseHeaders, &n)
		if h.URL != "" {
			// The recorder redacted secret-looking query parameters; the
			// literal values and the patterns apply to the URL too.
			rd.part = "http.url"
			if u, k := rd.text(h.URL); k > 0 {
				h.URL = u
				n += k
			}
		}
		rawBody := &h.Body
		rawText("http.body", &rawBody)
		h.Body = *rawBody
		if n > before {
			in.HTTP = &h
		}
	}
	return n
}

func (rd *Redactor) headerMap(part string, m map[string]string, n *int) map[string]string {
	var out map[string]string
	for _, k := range sortedKeys(m) {
		v := m[k]
		nv := v
		switch {
		case v == Redacted:
		case rd.secretHeader(k):
			nv = Redacted
			rd.report(part+"."+k, "header name")
		default:
			rd.part = part + "." + k
			nv, _ = rd.text(v)
		}
		if nv != v {
			if out == nil {
				out = make(map[string]string, len(m))
				for k2, v2 := range m {
					out[k2] = v2
				}
			}
			out[k] = nv
			*n++
		}
	}
	if out == nil {
		return m
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (rd *Redactor) report(where, rule string) {
	if rd.find != nil {
		rd.find(Secret{Interaction: rd.at, Where: where, Rule: rule})
	}
}

// text redacts a plain string (a raw line, a header value, a server's
// command line) by the literal values and the patterns.
func (rd *Redactor) text(s string) (string, int) {
	n := 0
	for _, v := range rd.values {
		if c := strings.Count(s, v); c > 0 {
			s = strings.ReplaceAll(s, v, Redacted)
			n += c
			rd.report(rd.part, "value")
		}
	}
	for _, re := range rd.patterns {
		locs := re.findAll(s)
		if len(locs) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, loc := range locs {
			start, end := loc[0], loc[1]
			if len(loc) >= 4 && loc[2] >= 0 {
				start, end = loc[2], loc[3]
			}
			if s[start:end] == Redacted || s[start:end] == RedactedPlaceholder || start < last {
				continue
			}
			b.WriteString(s[last:start])
			b.WriteString(Redacted)
			last = end
			n++
			rd.report(rd.part, "pattern "+re.re.String())
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s, n
}

func (rd *Redactor) secretHeader(name string) bool {
	return rd.headers[strings.ToLower(name)] || (rd.rules.SecretLikeNames && SecretName(name))
}

func (rd *Redactor) secretMember(name string) bool {
	k := memberKey(name)
	return rd.members[k] || (rd.rules.SecretLikeNames && secretKey(k))
}

// SecretName reports header, query parameter and command-line flag names
// whose values are secrets by default: credentials, cookies, session ids
// (Mcp-Session-Id, and the sessionId that the HTTP+SSE message endpoint
// carries in its query), the names that SecretMember knows, and the short
// names that mean a secret in a header or URL (key, auth, sig, signature,
// *-key, *api-key*).
func SecretName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie", "sessionid",
		"key", "auth", "sig", "signature":
		return true
	}
	n = strings.ReplaceAll(n, "_", "-")
	// The suffix session-id takes Mcp-Session-Id and its kin.
	return strings.HasSuffix(n, "-key") || strings.HasSuffix(n, "session-id") ||
		strings.Contains(n, "api-key") || strings.Contains(n, "apikey") || strings.Contains(n, "password") ||
		SecretMember(name)
}

// SecretMember reports JSON member names whose values are secrets by
// default, in any case and separator style ("github_token", "GitHubToken",
// "API-KEY" alike): token and any name that ends in the word token
// (*_token, *Token, *-token), secret, password, passwd, passphrase,
// credentials, and names that end in them (client_secret, db_password),
// api_key and *api_key, private_key, secret_key, access_key, signing_key,
// aws_secret_access_key, access_key_id, authorization, cookie and
// set_cookie.
//
// MCP's own members are not secrets, nor are counts and cursors:
// progressToken, pageToken, nextPageToken, nextToken and
// continuationToken (paging), tokens, maxTokens, inputTokens, tokenCount
// and every other name that does not end in the word token, cursor,
// nextCursor, sessionId, requestId. The cassette, cassette lint and the
// live log all decide by this function.
func SecretMember(name string) bool {
	return secretKey(memberKey(name))
}

// secretKey is SecretMember for a name folded by memberKey. It looks at the
// last byte first: most names end in none of the secret words.
func secretKey(k string) bool {
	if k == "" {
		return false
	}
	switch k[len(k)-1] {
	case 'n': // ...token, authorization
		if !strings.HasSuffix(k, "token") {
			return strings.HasSuffix(k, "authorization")
		}
		switch k {
		case "progresstoken", "nexttoken", "continuationtoken":
			return false
		}
		return !strings.HasSuffix(k, "pagetoken")
	case 't': // ...secret
		return strings.HasSuffix(k, "secret")
	case 'd': // ...password, ...passwd, accesskeyid
		return strings.HasSuffix(k, "password") || strings.HasSuffix(k, "passwd") || k == "accesskeyid"
	case 'e': // ...passphrase, cookie, setcookie
		return strings.HasSuffix(k, "passphrase") || k == "cookie" || k == "setcookie"
	case 's': // ...credentials
		return strings.HasSuffix(k, "credentials")
	case 'l': // ...credential
		return strings.HasSuffix(k, "credential")
	case 'y': // ...apikey, ...privatekey, ...secretkey, ...accesskey, ...signingkey
		return strings.HasSuffix(k, "apikey") || strings.HasSuffix(k, "privatekey") || strings.HasSuffix(k, "secretkey") ||
			strings.HasSuffix(k, "accesskey") || strings.HasSuffix(k, "signingkey")
	}
	return false
}

// memberKey folds a member name for comparison: lower case, without "-"
// and "_".
func memberKey(name string) string {
	plain := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '-' || c == '_' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return name // the common case: no allocation
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r != '-' && r != '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mayHoldSecretMember reports whether raw may hold a member whose name is
// a secret's: it looks at each member name (a string followed by a colon)
// with the walk's own test, secretMember, and at nothing else. It answers
// yes when it cannot tell cheaply: a string with an escape, a large
// message, text that is not JSON.
func (rd *Redactor) mayHoldSecretMember(raw []byte) bool {
	if len(rd.members) == 0 && !rd.rules.SecretLikeNames {
		return false
	}
	if len(raw) > 64<<10 {
		return true
	}
	// Outside strings JSON holds no quote, and a string without a
	// backslash no quote either: the quotes pair up in order.
	for i := 0; ; {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return false
		}
		start := i + q + 1
		e := bytes.IndexByte(raw[start:], '"')
		if e < 0 {
			return true
		}
		end := start + e
		name := raw[start:end]
		if bytes.IndexByte(name, '\\') >= 0 {
			return true
		}
		i = end + 1
		for i < len(raw) && isSpace(raw[i]) {
			i++
		}
		if i < len(raw) && raw[i] == ':' && rd.secretMemberBytes(name) {
			return true
		}
	}
}

// secretMemberBytes is secretMember for a name in a message's bytes,
// folded into the redactor's scratch instead of a new string.
func (rd *Redactor) secretMemberBytes(name []byte) bool {
	k := rd.fold[:0]
	for _, c := range name {
		switch {
		case c >= 0x80:
			return rd.secretMember(string(name)) // memberKey lowers it as Unicode
		case c == '-' || c == '_':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		k = append(k, c)
	}
	rd.fold = k
	return rd.members[string(k)] || (rd.rules.SecretLikeNames && secretKey(unsafeString(k)))
}

// edit replaces data[start:end] by repl.
type edit struct {
	start, end int
	repl       []byte
}

// message redacts one JSON-RPC message; request says it is a client's
// request, whose secrets become RedactedPlaceholder.
func (rd *Redactor) message(raw json.RawMessage, request bool) (json.RawMessage, int) {
	key := msgKey{unsafeData(raw), len(raw)}
	cached := rd.find == nil && !rd.uncached
	if cached {
		if out, ok := rd.cache[key]; ok {
			if &out[0] == &raw[0] {
				return raw, 0
			}
			return out, 1
		}
	}
	rd.edits = rd.edits[:0]
	whole, anyValue := quotedRedacted, quotedRedacted
	if request {
		whole, anyValue = quotedPlaceholder, quotedAny
	}
	for _, p := range rd.rules.Paths {
		if p == "" {
			continue
		}
		res := gjson.GetBytes(raw, p)
		if !res.Exists() {
			continue
		}
		if len(res.Indexes) > 0 {
			for i, r := range res.Array() {
				if idx := res.Indexes[i]; idx > 0 && !isRedacted(r.Raw) {
					rd.edits = append(rd.edits, edit{idx, idx + len(r.Raw), anyValue})
					rd.report(rd.part+" "+p, "path")
				}
			}
			continue
		}
		if res.Index > 0 && !isRedacted(res.Raw) {
			rd.edits = append(rd.edits, edit{res.Index, res.Index + len(res.Raw), anyValue})
			rd.report(rd.part+" "+p, "path")
		}
	}
	// Without escapes, the text of every string is in raw as it is: when
	// raw holds no literal value and no place where a pattern can start,
	// no string does, and only the member names are looked at.
	// (A large message is scanned string by string only.)
	texts := rd.find != nil || len(raw) > 64<<10 || bytes.IndexByte(raw, '\\') >= 0 || rd.mayHoldText(unsafeString(raw))
	// Likewise for member names: most messages hold none that can be a
	// secret's, and then need no walk at all.
	members := rd.mayHoldSecretMember(raw)
	if !texts && !members && len(rd.edits) == 0 {
		if cached {
			rd.cache[key] = raw
		}
		return raw, 0
	}
	where := func(path []string) string { return rd.part + " " + strings.Join(path, ".") }
	walkValues(raw, func(path []string, start, end int) {
		if path[0] == "jsonrpc" || path[0] == "method" {
			return
		}
		name := path[len(path)-1]
		member := members && rd.secretMember(name)
		if !member && !texts {
			return
		}
		s, ok := unquoteView(raw[start:end])
		if !ok || s == Redacted || s == RedactedPlaceholder || s == "{{any}}" {
			return
		}
		if member && s != "" {
			rd.edits = append(rd.edits, edit{start, end, whole})
			if rd.find != nil {
				rd.report(where(path), "member name "+name)
			}
			return
		}
		if !texts {
			return
		}
		save := rd.part
		if rd.find != nil {
			rd.part = where(path)
		}
		out, k := rd.text(s)
		rd.part = save
		if k == 0 {
			return
		}
		if request {
			rd.edits = append(rd.edits, edit{start, end, whole})
			return
		}
		rd.edits = append(rd.edits, edit{start, end, quote(out)})
	}, func(path []string, start, end int) {
		// A number, an object or an array under a secret's name is
		// replaced whole (a password of digits, "credentials": {...}),
		// except in a JSON Schema's map of property names, where the
		// value describes the secret and holds none.
		if !members || path[0] == "jsonrpc" {
			return
		}
		name := path[len(path)-1]
		if !rd.secretMember(name) || len(path) > 1 && schemaNameMap(path[len(path)-2]) {
			return
		}
		rd.edits = append(rd.edits, edit{start, end, whole})
		if rd.find != nil {
			rd.report(where(path), "member name "+name)
		}
	})
	if len(rd.edits) == 0 {
		if cached {
			rd.cache[key] = raw
		}
		return raw, 0
	}
	sort.SliceStable(rd.edits, func(i, j int) bool { return rd.edits[i].start < rd.edits[j].start })
	var b bytes.Buffer
	b.Grow(len(raw))
	last, n := 0, 0
	for _, e := range rd.edits {
		if e.start < last {
			continue // inside a value already replaced
		}
		b.Write(raw[last:e.start])
		b.Write(e.repl)
		last = e.end
		n++
	}
	b.Write(raw[last:])
	out := json.RawMessage(b.Bytes())
	if cached {
		rd.cache[key] = out
	}
	return out, n
}

// The replacements of a whole value, quoted: in a server's message, and
// in a client's request, where a path's value becomes {{any}}.
var (
	quotedRedacted    = []byte(strconv.Quote(Redacted))
	quotedPlaceholder = []byte(strconv.Quote(RedactedPlaceholder))
	quotedAny         = []byte(`"{{any}}"`)
)

// mayHoldText reports whether s holds a literal value or a place where a
// pattern can start.
func (rd *Redactor) mayHoldText(s string) bool {
	for _, v := range rd.values {
		if strings.Contains(s, v) {
			return true
		}
	}
	for _, p := range rd.patterns {
		if p.mayMatch(s) {
			return true
		}
	}
	return false
}

// unquoteView is jsonrpc.Unquote without a copy for a string without
// escapes: the result shares raw's bytes, which must not change while it
// is used.
func unquoteView(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return unsafeString(raw[1 : len(raw)-1]), true
	}
	return jsonrpc.Unquote(raw)
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func isRedacted(raw string) bool {
	return raw == strconv.Quote(Redacted) || raw == strconv.Quote(RedactedPlaceholder) || raw == `"{{any}}"`
}

func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func unsafeData(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

// walkStrings calls f for every string value of the JSON text data with
// its path (member names and array indexes) and its byte span, quotes
// included. data must be valid JSON.
func walkStrings(data []byte, f func(path []string, start, end int)) {
	w := &walker{data: data, f: f}
	w.value(0, nil)
}

// walkValues is walkStrings that also calls other for every value that is a
// number, an object or an array, with its byte span (an object's or an
// array's after the strings inside it).
func walkValues(data []byte, f, other func(path []string, start, end int)) {
	w := &walker{data: data, f: f, other: other}
	w.value(0, nil)
}

type walker struct {
	data  []byte
	f     func(path []string, start, end int)
	other func(path []string, start, end int) // may be nil
}

func (w *walker) space(i int) int {
	for i < len(w.data) {
		switch w.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the end of the string that starts at i.
func (w *walker) str(i int) int {
	for j := i + 1; j < len(w.data); {
		q := bytes.IndexByte(w.data[j:], '"')
		if q < 0 {
			break
		}
		j += q
		// The quote ends the string unless an odd number of backslashes
		// comes before it.
		k := j
		for k > i+1 && w.data[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j + 1
		}
		j++
	}
	return len(w.data)
}

// value walks the value at i and returns where it ends.
func (w *walker) value(i int, path []string) int {
	i = w.space(i)
	if i >= len(w.data) {
		return i
	}
	switch w.data[i] {
	case '"':
		end := w.str(i)
		if len(path) > 0 {
			w.f(path, i, end)
		}
		return end
	case '{':
		start := i
		i = w.space(i + 1)
		for i < len(w.data) && w.data[i] != '}' {
			kend := w.str(i)
			key, _ := unquoteView(w.data[i:kend])
			i = w.space(kend)
			if i < len(w.data) && w.data[i] == ':' {
				i++
			}
			// The path is a stack shared by the calls of f, which use it
			// before they return.
			i = w.space(w.value(i, append(path, key)))
			if i < len(w.data) && w.data[i] == ',' {
				i = w.space(i + 1)
			}
		}
		w.done(path, start, i+1)
		return i + 1
	case '[':
		start := i
		i = w.space(i + 1)
		for n := 0; i < len(w.data) && w.data[i] != ']'; n++ {
			i = w.space(w.value(i, append(path, strconv.Itoa(n))))
			if i < len(w.data) && w.data[i] == ',' {
				i = w.space(i + 1)
			}
		}
		w.done(path, start, i+1)
		return i + 1
	}
	start := i
	for i < len(w.data) && !strings.ContainsRune(",}] \t\r\n", rune(w.data[i])) {
		i++
	}
	if c := w.data[start]; c == '-' || c >= '0' && c <= '9' {
		w.done(path, start, i)
	}
	return i
}

// schemaNameMap reports the JSON Schema keywords whose members are named by
// the schema's author (a property called "password"), not by a value's.
func schemaNameMap(keyword string) bool {
	switch keyword {
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		return true
	}
	return false
}

// done reports a value that is not a string to w.other.
func (w *walker) done(path []string, start, end int) {
	if w.other != nil && len(path) > 0 {
		w.other(path, start, min(end, len(w.data)))
	}
}
