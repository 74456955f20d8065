package cassettes

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

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

// text redacts a plain string (a raw line, a header value, a server's
// command line) by the literal values and the patterns.
func (rd *Redactor) text(s string) (string, int) {
	if rd.clear(s) {
		return s, 0
	}
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

// mayHoldText reports whether s holds a literal value or a place where a
// pattern can start.
func (rd *Redactor) mayHoldText(s string) bool {
	if rd.clear(s) {
		return false
	}
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

// shortLen is the longest string that clear looks at byte by byte; a
// longer one is scanned for each pattern (strings.IndexByte and its kin,
// vectorised), which costs more than a byte-wise loop only on strings
// shorter than about this: a tool's name, an argument, a short answer.
const shortLen = 128

// shortFilter returns Redactor.short for patterns and values; nil when a
// pattern's needs are unknown.
func shortFilter(patterns []*pattern, values []string) *[256]bool {
	var t [256]bool
	for _, p := range patterns {
		if p.needs == "" {
			return nil
		}
		for i := range len(p.needs) {
			t[p.needs[i]] = true
		}
	}
	for _, v := range values {
		t[v[0]] = true
	}
	return &t
}

// clear reports whether s is short and holds no byte that a literal value
// or a match of a pattern needs: no secret that the rules' text finds.
func (rd *Redactor) clear(s string) bool {
	if rd.short == nil || len(s) > shortLen {
		return false
	}
	for i := range len(s) {
		if rd.short[s[i]] {
			return false
		}
	}
	return true
}
