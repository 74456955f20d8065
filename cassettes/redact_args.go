package cassettes

import "strings"

// RedactArgs returns a copy of a command line with the values that secret
// names give away replaced by [Redacted]: NAME=VALUE (an environment
// assignment, as for env(1)) and --NAME=VALUE where NAME is secret-like
// ([SecretName]: API_KEY, DB_PASSWORD, --client-secret, --token...), and
// the argument after a secret-named flag given alone (--token VALUE). The
// second result counts the replacements.
func RedactArgs(argv []string) ([]string, int) {
	out := append([]string(nil), argv...)
	n := 0
	for i := 0; i < len(out); i++ {
		a := out[i]
		name, value, ok := strings.Cut(a, "=")
		flag := strings.TrimLeft(name, "-")
		switch {
		case flag == "" || strings.ContainsAny(flag, " /:"):
		case ok:
			if value != "" && value != Redacted && SecretName(flag) {
				out[i] = name + "=" + Redacted
				n++
			}
		case flag != name && SecretName(flag) && i+1 < len(out) &&
			!strings.HasPrefix(out[i+1], "-") && out[i+1] != Redacted:
			out[i+1] = Redacted
			n++
			i++
		}
	}
	return out, n
}
