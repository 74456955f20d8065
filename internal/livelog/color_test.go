package livelog

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestTextHandlerColored: in colour (a terminal), a warning is red, a
// message of the client cyan, one of the server green, any other line
// plain; without, every line is plain.
func TestTextHandlerColored(t *testing.T) {
	var plain, colored strings.Builder
	for _, h := range []slog.Handler{NewTextHandler(&plain), NewTextHandler(&colored).Colored()} {
		l := slog.New(h)
		call, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`))
		answer, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`))
		failed, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}`))
		Message(l, ToServer, call, 0, "")
		Message(l, ToClient, answer, 0, "")
		Message(l, ToClient, failed, 0, "")
		l.Info("listening")
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("plain lines with colour:\n%q", plain.String())
	}
	lines := strings.Split(strings.TrimSpace(colored.String()), "\n")
	for i, want := range []string{"\x1b[36mmcpmock: → 1 tools/call", "\x1b[32mmcpmock: ← 1 result", "\x1b[31mmcpmock: ← 2 ✗ error", "mcpmock: listening"} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: %q, want it to start with %q", i, lines, want)
		}
	}
}
