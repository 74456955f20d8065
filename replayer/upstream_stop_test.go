package replayer_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/replayer"
)

// TestMain makes the test binary a stdio server when testpeer asks it to
// (upstream commands).
func TestMain(m *testing.M) {
	testpeer.Main()
	os.Exit(m.Run())
}

// TestUpstreamCloseStopSequence: Close stops a command as every child of
// mcpmock is stopped: stdin closed, then SIGTERM after StopTimeout, then
// SIGKILL. (It once killed a server that ignored the end of its stdin after
// a fixed 2 s, without a SIGTERM.)
func TestUpstreamCloseStopSequence(t *testing.T) {
	// (SIGKILL after SIGTERM is internal/child's TestStopSequence: the
	// test there waits until its child ignores SIGTERM.)
	tests := []struct {
		name, kind string
		stop       time.Duration // a grace that must not run out is an hour
		want       int           // the exit status Close reports; 0: no error
	}{
		{"exits at the end of stdin", testpeer.MCPGo, time.Hour, 0},
		{"ignores the end of stdin: SIGTERM", testpeer.Hang, time.Millisecond, 128 + int(syscall.SIGTERM)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, env := testpeer.Command(tt.kind)
			var stderr strings.Builder
			u, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: argv, Env: env, Stderr: &stderr,
				StopTimeout: tt.stop})
			if err != nil {
				t.Fatal(err)
			}
			err = u.Close()
			switch {
			case tt.want == 0 && err != nil:
				t.Errorf("Close() = %v, want nil", err)
			case tt.want != 0 && (err == nil || !strings.Contains(err.Error(), "status "+strconv.Itoa(tt.want))):
				t.Errorf("Close() = %v, want the exit status %d", err, tt.want)
			case tt.want != 0 && !errors.Is(err, replayer.ErrUpstream):
				t.Errorf("Close() = %v, not an ErrUpstream", err)
			}
			if err := u.Close(); err != nil {
				t.Errorf("second Close() = %v, want nil", err)
			}
		})
	}
}

func TestUpstreamStartError(t *testing.T) {
	_, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: []string{"/nonexistent/mcp-server", "--x"}})
	if err == nil || !errors.Is(err, replayer.ErrUpstream) || !strings.Contains(err.Error(), `start server "/nonexistent/mcp-server"`) {
		t.Errorf("DialUpstream() error = %v, want an ErrUpstream naming the command", err)
	}
}
