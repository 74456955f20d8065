package cassettes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedactArgs(t *testing.T) {
	tests := []struct {
		in, want []string
		n        int
	}{
		{[]string{"server", "--port", "8080"}, []string{"server", "--port", "8080"}, 0},
		{[]string{"env", "API_KEY=v1", "DB_PASSWORD=v2", "HOME=/h", "server"}, []string{"env", "API_KEY=" + Redacted, "DB_PASSWORD=" + Redacted, "HOME=/h", "server"}, 2},
		{[]string{"server", "--api-key=v", "--token", "v", "--client-secret", "v", "--verbose"}, []string{"server", "--api-key=" + Redacted, "--token", Redacted, "--client-secret", Redacted, "--verbose"}, 3},
		{[]string{"server", "--token", "--verbose"}, []string{"server", "--token", "--verbose"}, 0},
		{[]string{"server", "--token"}, []string{"server", "--token"}, 0},
		{[]string{"server", "-test.run=^$", "--db=postgres://h/x"}, []string{"server", "-test.run=^$", "--db=postgres://h/x"}, 0},
		{[]string{"API_TOKEN=v", "server"}, []string{"API_TOKEN=" + Redacted, "server"}, 1},
		{[]string{"server", "--api-key=" + Redacted}, []string{"server", "--api-key=" + Redacted}, 0},
	}
	for _, tt := range tests {
		got, n := RedactArgs(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" || n != tt.n {
			t.Errorf("RedactArgs(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.n)
		}
	}
	// Finishing a cassette redacts its meta.server, and Secrets finds them.
	c := &Cassette{Version: 1, Meta: Meta{Server: []string{"env", "SERVICE_TOKEN=v", "server", "--password", "v"}}}
	if s := c.Secrets(DefaultRedactRules()); len(s) != 2 || s[0].Where != "meta.server[1]" || s[1].Where != "meta.server[4]" {
		t.Errorf("Secrets = %+v", s)
	}
	if n := c.Redact(DefaultRedactRules()); n != 2 || c.Meta.Server[1] != "SERVICE_TOKEN="+Redacted || c.Meta.Server[4] != Redacted {
		t.Errorf("Redact = %d, %q", n, c.Meta.Server)
	}
}
