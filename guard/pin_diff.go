package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// maxDiffLines bounds the lines a definition's diff compares (a quadratic
// comparison); past it, the old and the new lines are shown whole.
const maxDiffLines = 2000

// definitionDiff shows how the canonical definition cur differs from old
// (nil for a new tool): for each member that changed, its name, then its
// lines, "- " for the pinned ones, "+ " for the new ones and "  " for the
// lines both have. A description is shown as its text; schemas and
// annotations as indented JSON with sorted members.
func definitionDiff(old, cur json.RawMessage) string {
	var o, c map[string]json.RawMessage
	json.Unmarshal(old, &o)
	json.Unmarshal(cur, &c)
	var b strings.Builder
	for _, f := range pinnedFields {
		if string(o[f]) == string(c[f]) {
			continue
		}
		b.WriteString(f + ":")
		switch {
		case o[f] == nil:
			b.WriteString(" (new)")
		case c[f] == nil:
			b.WriteString(" (removed)")
		}
		b.WriteString("\n")
		writeLineDiff(&b, memberLines(o[f]), memberLines(c[f]))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// memberLines are the lines of a member's value: a string's text, or
// indented JSON.
func memberLines(raw json.RawMessage) []string {
	if raw == nil {
		return nil
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "", "  ") != nil {
			buf.Reset()
			buf.Write(raw)
		}
		text = buf.String()
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = printable(l)
	}
	return lines
}

// writeLineDiff writes the lines of a and b as a diff by their longest
// common subsequence.
func writeLineDiff(b *strings.Builder, a, c []string) {
	if len(a)+len(c) > maxDiffLines {
		for _, l := range a {
			b.WriteString("- " + l + "\n")
		}
		for _, l := range c {
			b.WriteString("+ " + l + "\n")
		}
		return
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and c[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(c)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(c) - 1; j >= 0; j-- {
			if a[i] == c[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(c) {
		switch {
		case i < len(a) && j < len(c) && a[i] == c[j]:
			b.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(c) || lcs[i+1][j] >= lcs[i][j+1]):
			b.WriteString("- " + a[i] + "\n")
			i++
		default:
			b.WriteString("+ " + c[j] + "\n")
			j++
		}
	}
}

// printable shows the control characters of a server's text as escapes
// (\u001b), so that a description cannot move the cursor or erase the
// lines of the question it is shown in.
func printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
