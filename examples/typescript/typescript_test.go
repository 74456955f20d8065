// Package typescript holds a TypeScript client suite (the official SDK,
// node --test, weather.test.mjs) that mcpmock run serves hermetically over
// Streamable HTTP and stdio. The test here is opt-in, like the fidelity
// harness: the default test run needs no Node.js.
//
//	MCPMOCK_TYPESCRIPT=1 go test ./examples/typescript
package typescript

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptSuite installs the suite (npm ci from package-lock.json),
// builds mcpmock, and runs the suite through mcpmock run: it passes on the
// recording, passes with the rate-limit overlay (the client retries), and
// fails the run (exit 1, the miss a failed JUnit test case) when the
// client asks for what the cassette does not hold.
func TestTypeScriptSuite(t *testing.T) {
	if os.Getenv("MCPMOCK_TYPESCRIPT") != "1" {
		t.Skip("opt-in: set MCPMOCK_TYPESCRIPT=1 (needs Node.js 20 or later and npm)")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("MCPMOCK_TYPESCRIPT=1 but %s is not on PATH", tool)
		}
	}
	npm := exec.CommandContext(t.Context(), "npm", "ci", "--prefer-offline", "--no-audit", "--no-fund")
	if out, err := npm.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	mcpmock := filepath.Join(t.TempDir(), "mcpmock")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", mcpmock, "../../cmd/mcpmock")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		name    string
		example string
		flags   []string
		want    int
	}{
		{"recording", "", nil, 0},
		{"rate limit", "ratelimit", []string{"--overlay", "../ratelimit/ratelimit.json"}, 0},
		{"miss", "miss", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			junit := filepath.Join(t.TempDir(), "junit.xml")
			args := append([]string{"run", "-c", "weather=../weather/testdata/weather.json", "--junit", junit}, tt.flags...)
			cmd := exec.CommandContext(t.Context(), mcpmock, append(args, "--", "node", "--test")...)
			cmd.Env = append(os.Environ(), "MCPMOCK_EXAMPLE="+tt.example)
			out, err := cmd.CombinedOutput()
			status := 0
			if ee, ok := err.(*exec.ExitError); ok {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.want {
				t.Fatalf("mcpmock run exited with %d, want %d:\n%s", status, tt.want, out)
			}
			if !strings.Contains(string(out), "# fail 0") {
				t.Errorf("the suite itself failed:\n%s", out)
			}
			var j struct {
				Failures int `xml:"failures,attr"`
				Suites   []struct {
					Cases []struct {
						Name    string    `xml:"name,attr"`
						Failure *struct{} `xml:"failure"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			if err := xml.Unmarshal(b, &j); err != nil {
				t.Fatalf("junit: %v", err)
			}
			if tt.want == 0 && j.Failures != 0 || tt.want == 1 && (j.Failures == 0 || len(j.Suites[0].Cases) < 2 || j.Suites[0].Cases[1].Name != "miss 1: tools/call get_weather") {
				t.Errorf("junit for exit %d:\n%s", tt.want, b)
			}
		})
	}
}
