package mcpmocktest_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/mcpmocktest"
)

// whereEnv makes TestWhereChild fail on purpose: TestFailuresPointAtTheTest
// sets it in the child process it starts.
const whereEnv = "MCPMOCKTEST_WHERE"

// TestWhereChild makes mcpmocktest fail and log in every way it can, each
// on a line that says what it must print there ("want:", parts separated by
// " | "). Without whereEnv it does nothing: TestFailuresPointAtTheTest runs
// it in a child process and reads what the testing package printed.
func TestWhereChild(t *testing.T) {
	if os.Getenv(whereEnv) == "" {
		return
	}
	for _, way := range waysIn {
		t.Run("miss/"+way, func(t *testing.T) {
			srv := mcpmocktest.NewServer(t, weatherCassette, nil) // want: no recorded tools/call of tool "get_weather" matches | (-recorded +live)
			runClient(t, srv, "go-sdk", "", way, weatherCalls("Paris"))
		})
	}
	t.Run("unused", func(t *testing.T) {
		srv := mcpmocktest.NewServer(t, weatherCassette, &mcpmocktest.Options{FailOnUnused: true}) // want: interaction 2 was never used
		runClient(t, srv, "go-sdk", "", "command", weatherCalls("London"))
	})
	t.Run("assert", func(t *testing.T) {
		srv := mcpmocktest.NewServer(t, weatherCassette, nil)
		runClient(t, srv, "go-sdk", "", "conn", weatherCalls("London"))
		srv.AssertCalled(t, "get_weather", map[string]any{"location": "Londres"}) // want: get_weather was not called with
		srv.AssertCalled(t, "echo", nil)                                          // want: echo was never called
		srv.AssertNotCalled(t, "get_weather")                                     // want: get_weather was called 1 times
		srv.AssertCalls(t)                                                        // want: tool calls (-want +got)
	})
	t.Run("stub", func(t *testing.T) {
		mcpmocktest.NewServer(t, weatherCassette, &mcpmocktest.Options{Stubs: []*mcpmocktest.Stub{mcpmocktest.OnCall("echo").Times(0)}}) // want: Times(0)
	})
	t.Run("overlay", func(t *testing.T) {
		mcpmocktest.NewServer(t, weatherCassette, &mcpmocktest.Options{OverlayFiles: []string{"testdata/missing-overlay.json"}}) // want: overlay
	})
	t.Run("url/closed", func(t *testing.T) {
		srv := mcpmocktest.NewServer(t, weatherCassette, nil)
		srv.Close()
		srv.URL() // want: URL called after the server was closed
	})
	t.Run("missing", func(t *testing.T) {
		mcpmocktest.NewServer(t, "testdata/missing.json", nil) // want: record it with
	})
	t.Run("record", func(t *testing.T) {
		argv, env := testpeer.Command(testpeer.GoSDK)
		path := filepath.Join(t.TempDir(), "weather.json")
		srv := mcpmocktest.NewServer(t, path, &mcpmocktest.Options{Mode: mcpmocktest.ModeRecord, Upstream: argv, UpstreamEnv: env}) // want: record from | interactions to
		runClient(t, srv, "go-sdk", "2025-11-25", "conn", weatherCalls("Paris"))
		t.Fail() // so that the logs are printed
	})
	t.Run("record/unwritable", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		argv, env := testpeer.Command(testpeer.GoSDK)
		srv := mcpmocktest.NewServer(t, filepath.Join(file, "weather.json"), &mcpmocktest.Options{Mode: mcpmocktest.ModeRecord, Upstream: argv, UpstreamEnv: env}) // want: not a directory
		runClient(t, srv, "go-sdk", "2025-11-25", "conn", weatherCalls("Paris"))
	})
}

// TestFailuresPointAtTheTest runs TestWhereChild in a child process and
// checks that every failure and log line of mcpmocktest starts with the
// test's file and line (the NewServer call for what the server reports, the
// Assert call for an assertion), never with a file of mcpmocktest, and says
// on each marked line what the marker wants.
func TestFailuresPointAtTheTest(t *testing.T) {
	want := markers(t, "where_test.go")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestWhereChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), whereEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed; its output:\n%s", out)
	}
	located := regexp.MustCompile(`^\s+([\w.-]+\.go):(\d+): (.*)$`)
	got := map[int][]string{} // line of where_test.go → messages
	sc := bufio.NewScanner(bytes.NewReader(out))
	last := -1 // the line of the message being read
	for sc.Scan() {
		m := located.FindStringSubmatch(sc.Text())
		if m == nil {
			if msgs := got[last]; strings.HasPrefix(sc.Text(), "        ") && len(msgs) > 0 {
				msgs[len(msgs)-1] += "\n" + strings.TrimSpace(sc.Text())
			}
			continue
		}
		last = -1
		if m[1] != "where_test.go" {
			t.Errorf("a line names %s, not the test's file: %s", m[1], strings.TrimSpace(sc.Text()))
			continue
		}
		if located.MatchString("  " + m[3]) {
			t.Errorf("a line names two places: %s", strings.TrimSpace(sc.Text()))
		}
		n, _ := strconv.Atoi(m[2])
		got[n], last = append(got[n], m[3]), n
	}
	for line, parts := range want {
		for _, part := range parts {
			found := false
			for _, msg := range got[line] {
				found = found || strings.Contains(msg, part)
			}
			if !found {
				t.Errorf("where_test.go:%d: no line says %q there; it says %q", line, part, got[line])
			}
		}
	}
	if t.Failed() {
		t.Logf("the child's output:\n%s", out)
	}
}

// markers returns, for each line of file with a "// want: " comment, the
// parts that the comment wants said at that line.
func markers(t *testing.T, file string) map[int][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{}
	const marker = "// want: "
	for i, line := range strings.Split(string(data), "\n") {
		_, after, ok := strings.Cut(line, marker)
		if !ok || strings.Contains(line, `"`+marker) {
			continue
		}
		want[i+1] = strings.Split(after, " | ")
	}
	if len(want) == 0 {
		t.Fatal(fmt.Sprintf("%s has no markers", file))
	}
	return want
}
