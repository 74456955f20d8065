package cassettes

import (
	"bytes"
	"strings"
)

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
	if bytes.IndexByte(raw, '\\') >= 0 {
		return rd.mayHoldSecretMemberEscaped(raw)
	}
	// Without escapes every quote opens or closes a string, and no string
	// holds one: a member name is the string whose closing quote comes
	// last before a colon (white space between), from the quote before
	// it. A colon inside a string may show a piece of text that is no
	// name, which is looked at too; no name is missed. One scan for the
	// colons, where pairing the quotes scanned twice for each string.
	for i := 0; ; {
		c := bytes.IndexByte(raw[i:], ':')
		if c < 0 {
			return false
		}
		c += i
		i = c + 1
		e := c - 1
		for e >= 0 && isSpace(raw[e]) {
			e--
		}
		if e < 0 || raw[e] != '"' {
			continue
		}
		s := bytes.LastIndexByte(raw[:e], '"')
		if s < 0 {
			return true // not JSON
		}
		if rd.secretMemberBytes(raw[s+1 : e]) {
			return true
		}
	}
}

// mayHoldSecretMemberEscaped is mayHoldSecretMember for a message with a
// backslash: it pairs the quotes in order, and a name with an escape may
// be a secret's.
func (rd *Redactor) mayHoldSecretMemberEscaped(raw []byte) bool {
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
