// Package closest finds, for a name that names nothing (a typo), the known
// name it was most likely meant to be, for "did you mean" in errors.
package closest

import "strings"

// MaxEdits is the most edits (insertions, deletions, substitutions of a
// byte) that a typo is taken to be away from what it was meant to be.
const MaxEdits = 2

// Name returns the name of known closest to name, compared without regard
// to case, when it is at most MaxEdits away; ok is false when none is.
func Name(name string, known []string) (best string, ok bool) {
	dist := MaxEdits + 1
	for _, k := range known {
		if d := edits(strings.ToLower(name), strings.ToLower(k)); d < dist {
			best, dist = k, d
		}
	}
	return best, dist <= MaxEdits
}

// edits is the Levenshtein distance of a and b, in bytes.
func edits(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
