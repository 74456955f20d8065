package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"

	"github.com/google/go-cmp/cmp"
	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

var update = flag.Bool("update", false, "record the cassettes of testdata/diff again and rewrite the golden outputs of cassette diff")

// diffRecordings are the cassettes of testdata/diff: real recordings of the
// peer server (testdata/diff/peer) through mcpmock record, made by a go-sdk
// client that calls the steps in order.
var diffRecordings = []struct {
	name, variant, client string
	steps                 []string
}{
	{"base", "base", "go-sdk", []string{"list", "weather", "add", "echo"}},
	{"required", "required", "go-sdk", []string{"list", "weather", "add", "echo"}},
	{"description", "description", "go-sdk", []string{"list", "weather", "add", "echo"}},
	{"reordered", "base", "go-sdk", []string{"echo", "add", "list", "weather"}},
	{"reordered-mcpgo", "base", "mcp-go", []string{"add", "list", "echo", "weather"}},
}

// TestCassetteDiffRecordings makes the cassettes of testdata/diff again,
// by recording the peer server, and checks that they are the committed ones
// (the day of the recording aside): the golden diffs are of real
// recordings, not of hand-written files. -update writes them.
func TestCassetteDiffRecordings(t *testing.T) {
	dir := buildDiffPeer(t)
	for _, r := range diffRecordings {
		t.Run(r.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), r.name+".json")
			recordDiffPeer(t, dir, path, r.variant, r.client, r.steps)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "diff", r.name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestCassetteDiffRecordings -update)", err)
			}
			if diff := cmp.Diff(stableDay(want), stableDay(got)); diff != "" {
				t.Errorf("recording %s again gives another cassette than %s (-committed +recorded):\n%s", r.name, golden, diff)
			}
		})
	}
}

// buildDiffPeer builds the peer server of testdata/diff as "diffpeer" in
// the directory it returns.
func buildDiffPeer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "diffpeer"), "./testdata/diff/peer")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/diff/peer: %v\n%s", err, out)
	}
	return dir
}

// withPath puts dir first on the $PATH of a command.
func withPath(dir string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
}

// recordedAt is the day of a recording: the one line of a cassette that
// recording it again another day changes.
var recordedAt = regexp.MustCompile(`"recordedAt": "[^"]*"`)

func stableDay(b []byte) string {
	return recordedAt.ReplaceAllString(string(b), `"recordedAt": "DAY"`)
}

// recordDiffPeer records the peer server of the given variant into path
// through mcpmock record, the peer found on $PATH in dir (so the cassette's
// meta.server is the same wherever the test runs), with a go-sdk or mcp-go
// client doing the steps.
func recordDiffPeer(t *testing.T, dir, path, variant, client string, steps []string) {
	t.Helper()
	p := startWith(t, withPath(dir), "record", "--quiet", "-c", path, "--", "diffpeer", variant)
	ctx := testContext(t)
	var c diffClient
	var err error
	if client == "mcp-go" {
		c, err = dialMCPGo(ctx, p)
	} else {
		c, err = dialGoSDK(ctx, p)
	}
	if err != nil {
		t.Fatalf("%s client: %v\n%s", client, err, p.stderr)
	}
	args := map[string]map[string]any{"weather": {"location": "Paris"}, "add": {"a": 1, "b": 2}, "echo": {"text": "hi"}}
	tools := map[string]string{"weather": "get_weather", "add": "add", "echo": "echo"}
	for _, step := range steps {
		if step == "list" {
			n, err := c.listTools(ctx)
			if err != nil {
				t.Fatalf("%s: tools/list: %v\n%s", client, err, p.stderr)
			}
			if n != 3 {
				t.Errorf("%s: tools/list: %d tools, want 3", client, n)
			}
			continue
		}
		if err := c.call(ctx, tools[step], args[step]); err != nil {
			t.Fatalf("%s: %s: %v\n%s", client, step, err, p.stderr)
		}
	}
	c.close()
	if s := p.wait(t); s != 0 {
		t.Fatalf("record exited %d:\n%s", s, p.stderr)
	}
}

// diffClient is what recordDiffPeer asks of a client library.
type diffClient struct {
	listTools func(ctx context.Context) (int, error) // every page
	call      func(ctx context.Context, name string, args map[string]any) error
	close     func()
}

func dialGoSDK(ctx context.Context, p *proc) (diffClient, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "diff-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		return diffClient{}, err
	}
	return diffClient{
		listTools: func(ctx context.Context) (int, error) {
			n := 0
			for _, err := range cs.Tools(ctx, nil) {
				if err != nil {
					return n, err
				}
				n++
			}
			return n, nil
		},
		call: func(ctx context.Context, name string, args map[string]any) error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			return err
		},
		close: func() { cs.Close() },
	}, nil
}

func dialMCPGo(ctx context.Context, p *proc) (diffClient, error) {
	c := mcpgoclient.NewClient(mcpgotransport.NewIO(p.stdout, p.stdin, nil))
	if err := c.Start(ctx); err != nil {
		return diffClient{}, err
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "diff-client-mcpgo", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return diffClient{}, err
	}
	return diffClient{
		listTools: func(ctx context.Context) (int, error) {
			n := 0
			var req mcpgo.ListToolsRequest
			for {
				res, err := c.ListTools(ctx, req)
				if err != nil {
					return n, err
				}
				n += len(res.Tools)
				if res.NextCursor == "" {
					return n, nil
				}
				req.Params.Cursor = res.NextCursor
			}
		},
		call: func(ctx context.Context, name string, args map[string]any) error {
			var req mcpgo.CallToolRequest
			req.Params.Name = name
			req.Params.Arguments = args
			_, err := c.CallTool(ctx, req)
			return err
		},
		close: func() {
			c.Close()
			p.stdout.Close() // the mcp-go transport closes stdin, not stdout
		},
	}, nil
}

// TestCassetteDiffGolden diffs the base recording of testdata/diff with the
// others and compares the output, human and --json, and the exit status
// with the golden files: a required argument added breaks a client (exit 1
// with and without --breaking), a changed description does not (exit 0
// with --breaking), the same calls in another order are no change.
func TestCassetteDiffGolden(t *testing.T) {
	for _, tc := range []struct {
		name           string
		status         int // without --breaking
		breakingStatus int
	}{
		{"required", 1, 1},
		{"description", 1, 0},
		{"reordered", 0, 0},
		{"reordered-mcpgo", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, new := filepath.Join("testdata", "diff", "base.json"), filepath.Join("testdata", "diff", tc.name+".json")
			for _, form := range []struct {
				flags  []string
				golden string
				status int
			}{
				{nil, tc.name + ".txt", tc.status},
				{[]string{"--json"}, tc.name + ".diff.json", tc.status},
				{[]string{"--breaking"}, "", tc.breakingStatus},
			} {
				var stdout, stderr syncBuffer
				err := run(testContext(t), append(append([]string{"cassette", "diff"}, form.flags...), old, new), strings.NewReader(""), &stdout, &stderr)
				if got := exitCode(err, &stderr); got != form.status {
					t.Errorf("cassette diff %v exited %d, want %d:\n%s%s", form.flags, got, form.status, &stdout, &stderr)
				}
				if stderr.String() != "" {
					t.Errorf("cassette diff %v wrote to stderr:\n%s", form.flags, &stderr)
				}
				if form.golden == "" {
					continue
				}
				golden := filepath.Join("testdata", "diff", form.golden)
				if *update {
					if err := os.WriteFile(golden, []byte(stdout.String()), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -run TestCassetteDiffGolden -update)", err)
				}
				if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
					t.Errorf("cassette diff %v differs from %s (-want +got):\n%s", form.flags, golden, diff)
				}
			}
		})
	}
	// The reordered recordings hold the same calls as base, in another
	// order: their empty diffs are not for want of a difference.
	order := func(name string) string {
		c, err := cassettes.Load(filepath.Join("testdata", "diff", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var calls []string
		for _, in := range c.Interactions {
			calls = append(calls, gjson.GetBytes(in.Request, "method").String()+" "+gjson.GetBytes(in.Request, "params.name").String())
		}
		return strings.Join(calls, ", ")
	}
	for _, name := range []string{"reordered", "reordered-mcpgo"} {
		if a, b := order("base"), order(name); a == b {
			t.Errorf("%s.json is in the order of base.json: %s", name, a)
		}
	}
	// What the golden files must say, whatever -update wrote.
	for name, want := range map[string][]string{
		"required.txt":        {`BREAKING: tool get_weather: argument "country" is now required (new, of type "string")`, "BREAKING: interaction"},
		"description.txt":     {"changed: tool get_weather: the description changed from"},
		"reordered.txt":       {},
		"reordered-mcpgo.txt": {},
	} {
		got, err := os.ReadFile(filepath.Join("testdata", "diff", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !bytes.Contains(got, []byte(w)) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
		if len(want) == 0 && len(got) != 0 {
			t.Errorf("%s is not empty:\n%s", name, got)
		}
		if name == "description.txt" && bytes.Contains(got, []byte("BREAKING")) {
			t.Errorf("a changed description is breaking:\n%s", got)
		}
	}
}
