//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

// readmeCommand is how TestREADMECommands runs one command of the README.
type readmeCommand struct {
	// coveredBy names what runs the command instead of this test, when it
	// cannot run inside a test (the test command itself); the test checks
	// that the named place really has the command.
	coveredBy string
	// stdout must appear in the command's standard output.
	stdout []string
	// listens: the command serves until it is told to stop; the test waits
	// for its listening line, then sends SIGTERM and expects status 0.
	listens bool
	// check runs after the command, in the repository's root.
	check func(t *testing.T)
}

// weatherLines are what the weather example's client prints for the
// recorded session.
var weatherLines = []string{
	"get_weather(New York): Current weather in New York",
	"get_weather(London): Current weather in London",
	"get_weather(Atlantis): tool error: Failed to fetch weather data: API rate limit exceeded",
}

// readmeCommands holds every command of the README's sh blocks, in the
// README's order (the later ones use the cassette the first one records).
// A README command missing here, or one here that the README no longer
// shows, fails the test.
var readmeCommands = map[string]readmeCommand{
	"go install ./cmd/mcpmock":  {check: func(t *testing.T) {}},
	"go run ./cmd/mcpmock demo": {stdout: []string{"Both clients saw the same 3 results."}},
	"go test -race ./...":       {coveredBy: "../../.ci/run"},
	"go run ./examples/weather/client -- mcpmock record -c weather.json -- go run ./examples/weather/server": {
		stdout: weatherLines,
		check: func(t *testing.T) {
			c, err := cassettes.Load("weather.json")
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Interactions) < 4 {
				t.Errorf("weather.json holds %d interactions, want the handshake and three calls at least", len(c.Interactions))
			}
		},
	},
	"go run ./examples/weather/client -library mcp-go -- mcpmock replay -c weather.json": {stdout: weatherLines},
	"mcpmock cassette show weather.json":                                                 {stdout: []string{"tools/call", "get_weather"}},
	"go run ./examples/weather/client -- mcpmock replay -c weather.json --fault 'get_weather#2=tool-error:API rate limit exceeded'": {
		stdout: []string{weatherLines[0], "get_weather(London): tool error: API rate limit exceeded", weatherLines[2]},
	},
	"mcpmock replay -c weather.json --listen 127.0.0.1:0":                                         {listens: true},
	"go test ./examples/record":                                                                   {stdout: []string{"ok"}},
	"MCPMOCK_RECORD=1 go test ./examples/record":                                                  {stdout: []string{"ok"}},
	"mcpmock run -c weather.json -- sh -c 'go run ./examples/weather/client -- $MCPMOCK_COMMAND'": {stdout: weatherLines},
}

// readmeShellCommands returns the commands of the README's ```sh blocks:
// each line that is not a comment, without a trailing comment, with
// backslash continuations joined.
func readmeShellCommands(t *testing.T, readme []byte) []string {
	t.Helper()
	var cmds []string
	in := false
	cont := ""
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		case !in:
			continue
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, "  #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if strings.HasSuffix(line, `\`) {
			cont += strings.TrimSuffix(line, `\`)
			continue
		}
		cmds = append(cmds, cont+line)
		cont = ""
	}
	return cmds
}

// TestREADMECommands runs every command the README shows, as a user in a
// clone of the repository would: in the repository's root, with mcpmock on
// the PATH (this test binary acting as it, as testscript installs it). The cassettes and other files
// the commands write there are removed at the end.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build and go test of the examples")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeShellCommands(t, readme)
	shown := map[string]bool{}
	for _, c := range cmds {
		shown[c] = true
		if _, ok := readmeCommands[c]; !ok {
			t.Errorf("the README shows %q, which no test runs: add it to readmeCommands", c)
		}
	}
	for c := range readmeCommands {
		if !shown[c] {
			t.Errorf("readmeCommands has %q, which the README no longer shows", c)
		}
	}
	if t.Failed() {
		return
	}

	// The files the commands write in the root: none may be there before,
	// none is left after.
	written := []string{"weather.json"}
	for _, f := range written {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Fatalf("%s already exists in the repository's root; remove it before running this test", f)
		}
	}
	t.Cleanup(func() {
		for _, f := range written {
			os.Remove(filepath.Join(root, f))
		}
	})
	// Recording examples/record again must give the same file byte for
	// byte (stable files); it is put back in any case.
	recorded := filepath.Join(root, "examples", "record", "testdata", "weather.json")
	before, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(recorded, before, 0o644) })

	// testscript.Main (main_test.go) put this test binary on the PATH as
	// the mcpmock command.
	if _, err := exec.LookPath("mcpmock"); err != nil {
		t.Fatalf("no mcpmock command on the PATH: %v", err)
	}
	gobin := t.TempDir()
	env := append(os.Environ(), "GOBIN="+gobin)
	t.Chdir(root)

	for _, c := range cmds {
		rc := readmeCommands[c]
		ok := t.Run(c, func(t *testing.T) {
			if rc.coveredBy != "" {
				b, err := os.ReadFile(filepath.Join("cmd", "mcpmock", rc.coveredBy))
				if err != nil {
					t.Fatal(err)
				}
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c) + `$`).Match(b) {
					t.Errorf("%s does not run %q", rc.coveredBy, c)
				}
				return
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			script := c
			if rc.listens {
				script = "exec " + c // the signal goes to mcpmock, not to sh
			}
			cmd := exec.CommandContext(ctx, "sh", "-c", script)
			cmd.Env = env
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if rc.listens {
				runListening(t, cmd, &stderr)
			} else if err := cmd.Run(); err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
			}
			for _, want := range rc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, &stdout, &stderr)
				}
			}
			if rc.check != nil {
				rc.check(t)
			}
		})
		if !ok {
			return // the later commands depend on this one
		}
	}
	if c := "go install ./cmd/mcpmock"; shown[c] {
		if _, err := os.Stat(filepath.Join(gobin, "mcpmock")); err != nil {
			t.Errorf("%s installed no mcpmock in GOBIN: %v", c, err)
		}
	}
	after, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	// The day of the recording is the only thing that may change.
	day := regexp.MustCompile(`"recordedAt": "[^"]*"`)
	if !bytes.Equal(day.ReplaceAll(before, nil), day.ReplaceAll(after, nil)) {
		t.Errorf("recording examples/record again changed its cassette beyond meta.recordedAt; a re-recording must give the same file:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// runListening starts a command that serves until it is stopped, waits for
// its listening line, initializes a session at the URL, stops the command
// with SIGTERM and expects status 0.
func runListening(t *testing.T, cmd *exec.Cmd, stderr *syncBuffer) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	var url string
	for url == "" {
		s, changed := stderr.next()
		if m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(s); m != nil {
			url = m[1]
			break
		}
		select {
		case <-changed:
		case <-deadline:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no listening line within a minute:\n%s", s)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initReq))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"protocolVersion"`) {
		t.Errorf("initialize at %s: %s %s", url, resp.Status, body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, stderr)
	}
}
