package replayer_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTranscriptHarnessFails: the harness fails a transcript whose server
// lines differ from what the replay sends, on every front end: a different
// value, a line that never comes, messages no line expects, the wrong order
// on one stream, a name that nothing bound.
func TestTranscriptHarnessFails(t *testing.T) {
	cause, err := os.ReadFile("testdata/cause.json")
	if err != nil {
		t.Fatal(err)
	}
	// And a call that logs before its answer.
	cause = bytes.Replace(cause, []byte(`"interactions": [`), []byte(`"interactions": [
  {"from": "client", "atMs": 0,
   "request": {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "work", "arguments": {}}},
   "exchange": [{"from": "server", "atMs": 1, "message": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}}],
   "response": {"from": "server", "atMs": 2, "message": {"jsonrpc": "2.0", "id": 9, "result": {"content": []}}}},`), 1)
	const (
		initialize = `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}
<~ {"jsonrpc":"2.0","id":1}
`
		initialized = "> {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
		listChanged = "< {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n"
		ready       = "< {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"ready\"}}\n"
		ping        = "> {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n"
	)
	here := func(line string) string { return strings.TrimSuffix(line, "\n") + " # here\n" }
	tests := []struct {
		name, lines string
		// want matches the failure, which names a line marked
		// "# here" (one of them: an extra message is seen before the
		// next client line or while the next line is awaited).
		want string
	}{
		{"a different value", initialize + ping + here(`< {"jsonrpc":"2.0","id":"p","result":{"x":1}}`),
			`does not expect here`},
		{"a line that never comes", initialize + ping + `< {"jsonrpc":"2.0","id":"p","result":{}}` + "\n" + here(listChanged),
			`did not send what the transcript expects`},
		{"a message after the last line", initialize + here(ping),
			`after the last line, the server sent`},
		// The answer that follows the log is in flight when the log has
		// come: seen before the ping goes out, or before its answer, or
		// (when the ping's answer overtakes it) after the last line.
		{"a message before the next client line", initialize +
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","arguments":{}}}` + "\n" +
			here(`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`) +
			ping + here(`< {"jsonrpc":"2.0","id":"p","result":{}}`),
			`before the next client line, the server sent|does not expect here|after the last line, the server sent`},
		{"the wrong order on one stream", initialize + initialized + here(ready) + listChanged,
			`does not expect here`},
		{"a name nothing bound", initialize + here(`> {"jsonrpc":"2.0","id":"$nope","result":{}}`),
			`\$nope is not bound`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var text strings.Builder
			fmt.Fprintf(&text, "A broken transcript.\n-- cassette.json --\n%s-- transcript --\n", cause)
			var marked []int
			for i, line := range strings.Split(strings.TrimSuffix(tt.lines, "\n"), "\n") {
				if l, ok := strings.CutSuffix(line, " # here"); ok {
					line, marked = l, append(marked, i)
				}
				text.WriteString(line + "\n")
			}
			tr, err := parseTranscript("broken.txtar", []byte(text.String()))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tt.name, "never comes") {
				tr.wait = 500 * time.Millisecond // the deadline is the test
			}
			for _, transport := range transcriptTransports {
				t.Run(transport, func(t *testing.T) {
					f := &failures{TB: t}
					done := make(chan struct{})
					go func() {
						defer close(done)
						tr.replay(f, transport, nil)
					}()
					<-done
					got := f.String()
					if got == "" {
						t.Fatal("the harness passed the broken transcript")
					}
					if !regexp.MustCompile(tt.want).MatchString(got) {
						t.Errorf("the failure does not match %q:\n%s", tt.want, got)
					}
					var where []string
					for _, i := range marked {
						where = append(where, fmt.Sprintf("broken.txtar:%d: %s:", tr.file.sections[tr.section].line+i, transport))
					}
					if !slices.ContainsFunc(where, func(w string) bool { return strings.Contains(got, w) }) {
						t.Errorf("the failure names none of %q:\n%s", where, got)
					}
				})
			}
		})
	}
}

// failures is a testing.TB that notes failures instead of failing; Fatal
// ends the goroutine, as testing.T's does.
type failures struct {
	testing.TB
	mu   sync.Mutex // guards msgs
	msgs []string
}

func (f *failures) note(s string) {
	f.mu.Lock()
	f.msgs = append(f.msgs, s)
	f.mu.Unlock()
}

func (f *failures) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.msgs, "\n")
}

func (f *failures) Helper()                           {}
func (f *failures) Error(args ...any)                 { f.note(fmt.Sprint(args...)) }
func (f *failures) Errorf(format string, args ...any) { f.note(fmt.Sprintf(format, args...)) }
func (f *failures) Fatal(args ...any)                 { f.note(fmt.Sprint(args...)); runtime.Goexit() }
func (f *failures) Fatalf(format string, args ...any) {
	f.note(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
