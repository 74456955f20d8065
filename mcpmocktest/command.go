package mcpmocktest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// ServerEnv is the environment variable that makes Main serve: it names the
// configuration file that Command wrote.
const ServerEnv = "MCPMOCKTEST_SERVER"

// mainCalled is set by Main, so that Command can tell a TestMain that
// forgot it. It is written once, before any test runs.
var mainCalled atomic.Bool

// Main turns the test binary into the stdio server of a Server's Command
// when the binary was started that way, and returns at once otherwise. Call
// it first thing in TestMain:
//
//	func TestMain(m *testing.M) {
//		mcpmocktest.Main()
//		os.Exit(m.Run())
//	}
//
// Serving, Main never returns: it serves one MCP session on stdin and
// stdout, with the cassette and options of the Server, and exits when stdin
// closes (status 0), or as a scripted fault says.
func Main() {
	mainCalled.Store(true)
	path := os.Getenv(ServerEnv)
	if path == "" {
		return
	}
	status, err := serveChild(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpmocktest: %v\n", err)
		if status == 0 {
			status = 1
		}
	}
	os.Exit(status)
}

// childConfig is what Command hands the process it starts.
type childConfig struct {
	Mode        Mode     `json:"mode"`
	Cassette    string   `json:"cassette,omitempty"` // replay
	Overlay     string   `json:"overlay,omitempty"`  // replay: the stubs
	Strict      bool     `json:"strict,omitempty"`
	Upstream    []string `json:"upstream,omitempty"` // record, passthrough, new-episodes
	UpstreamEnv []string `json:"upstreamEnv,omitempty"`
	UpstreamURL string   `json:"upstreamURL,omitempty"`
	// Save is how the process prepares its recording (Options.Save).
	Save cassettes.SaveOptions `json:"save"`
	Dir  string                `json:"dir"` // events and recordings go here
	// Hints words the hint of a miss, as the Server would.
	Hints hinter `json:"hints"`
}

// Command returns the command line (argv) and the extra environment (env,
// KEY=VALUE) of a stdio MCP server for clients that only start processes:
// the test binary itself, re-executed, serving the same cassette with the
// same options. Every process started is a new session. It needs no
// installed mcpmock, but TestMain must call Main.
//
//	argv, env := srv.Command()
//	cmd := exec.Command(argv[0], argv[1:]...)
//	cmd.Env = append(os.Environ(), env...)
//	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
//
// A miss in such a process fails the test when the server closes (at the
// end of the test), and its calls join the journal once made.
func (s *Server) Command() (argv, env []string) {
	s.t.Helper()
	if !mainCalled.Load() {
		s.t.Fatalf("mcpmocktest: Command needs TestMain to call mcpmocktest.Main() first thing")
	}
	if s.opts.Matcher != nil {
		s.t.Fatalf("mcpmocktest: Command: Options.Matcher is Go code and cannot cross into another process; use Conn or URL, or configure matching in the cassette")
	}
	var err error
	s.cmdOnce.Do(func() { err = s.writeCommand() })
	if err != nil {
		s.t.Fatalf("mcpmocktest: Command: %v", err)
	}
	return append([]string(nil), s.cmdArgv...), append([]string(nil), s.cmdEnv...)
}

// tempDir makes the directory of the files that Command processes share
// with the server. It is not t.TempDir, which is removed before Close reads
// it (cleanups run last registered first).
func (s *Server) tempDir() (string, error) {
	return os.MkdirTemp("", "mcpmocktest-")
}

func (s *Server) removeTempDir() {
	s.mu.Lock()
	dir := s.childDir
	s.mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
}

func (s *Server) writeCommand() error {
	dir, err := s.tempDir()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.childDir = dir
	s.mu.Unlock()
	cfg := childConfig{Mode: s.mode, Strict: s.opts.Strict, Dir: dir, Save: s.opts.Save, Hints: s.hinter()}
	cfg.Hints.NoGoCode = true
	if s.mode != ModeReplay {
		cfg.Upstream, cfg.UpstreamEnv, cfg.UpstreamURL = s.opts.Upstream, s.opts.UpstreamEnv, s.opts.UpstreamURL
	}
	if !forwards(s.mode) {
		cfg.Cassette = filepath.Join(dir, "cassette.json")
		if err := cassettes.Save(cfg.Cassette, s.cassette); err != nil {
			return err
		}
		if len(s.overlay.Interactions) > 0 {
			cfg.Overlay = filepath.Join(dir, "overlay.json")
			if err := cassettes.Save(cfg.Overlay, s.overlay); err != nil {
				return err
			}
		}
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "server.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	s.cmdArgv = []string{exe, "-test.run=^$"}
	s.cmdEnv = []string{ServerEnv + "=" + path}
	return nil
}

// childEvent is one line of a Command process's journal file: a request
// handled, or, last, the recorded requests the process never used.
type childEvent struct {
	Call   *Call  `json:"call,omitempty"`
	Miss   string `json:"miss,omitempty"`
	Absent bool   `json:"absent,omitempty"` // the missed method was never recorded
	Used   []int  `json:"used,omitempty"`
	Done   bool   `json:"done,omitempty"`
}

// serveChild serves one session as the configuration file at path says,
// and returns the exit status.
func serveChild(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 1, err
	}
	var cfg childConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return 1, fmt.Errorf("%s: %w", path, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stamp := fmt.Sprintf("%020d-%d", time.Now().UnixNano(), os.Getpid())
	// The upstream, or any process the cassette's server starts, must not
	// become a Command server in turn.
	os.Unsetenv(ServerEnv)
	if forwards(cfg.Mode) {
		rec, err := recorder.New(filepath.Join(cfg.Dir, "rec-"+stamp+".json"), &recorder.Options{Save: cfg.Save})
		if err != nil {
			return 1, err
		}
		var status int
		if cfg.UpstreamURL != "" {
			err = recorder.StdioToHTTP(ctx, cfg.UpstreamURL, os.Stdin, os.Stdout, rec, nil)
		} else {
			status, err = recorder.Stdio(ctx, cfg.Upstream, os.Stdin, os.Stdout, os.Stderr, rec, &recorder.StdioOptions{Env: cfg.UpstreamEnv})
		}
		if cerr := rec.Close(); err == nil {
			err = cerr
		}
		return status, err
	}
	c, err := cassettes.Load(cfg.Cassette)
	if err != nil {
		return 1, err
	}
	journal, err := os.OpenFile(filepath.Join(cfg.Dir, "events-"+stamp+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 1, err
	}
	defer journal.Close()
	var mu sync.Mutex // guards journal writes
	write := func(ev childEvent) {
		line, _ := json.Marshal(ev)
		mu.Lock()
		journal.Write(append(line, '\n'))
		mu.Unlock()
	}
	eo := &replayer.Options{Strict: cfg.Strict, OnRequest: func(ev replayer.Event) {
		call := callOf(ev.Method, ev.Tool, ev.Arguments, ev.Params, ev.Interaction, ev.Miss)
		ce := childEvent{Call: &call}
		if ev.Miss != nil {
			ce.Miss, ce.Absent = cfg.Hints.report(ev.Miss), !ev.Miss.Recorded
		}
		write(ce)
	}}
	if cfg.Overlay != "" {
		o, err := cassettes.Load(cfg.Overlay)
		if err != nil {
			return 1, err
		}
		eo.Overlays = []*cassettes.Cassette{o}
	}
	if cfg.Mode == ModeNewEpisodes {
		u, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: cfg.Upstream, Env: cfg.UpstreamEnv, URL: cfg.UpstreamURL})
		if err != nil {
			return 1, err
		}
		defer u.Close()
		eo.Upstream = u
	}
	e, err := replayer.New(c, eo)
	if err != nil {
		return 1, err
	}
	serveErr := e.Serve(ctx, os.Stdin, os.Stdout)
	if eps := e.NewEpisodes(); len(eps) > 0 {
		// The server appends them to the cassette when the test ends.
		epc := cassettes.New()
		epc.Interactions = eps
		if err := cassettes.Save(filepath.Join(cfg.Dir, "episodes-"+stamp+".json"), epc); err != nil {
			return 1, err
		}
	}
	unused := map[int]bool{}
	for _, pos := range e.Unused() {
		unused[pos] = true
	}
	var used []int
	for i := range c.Interactions {
		if in := &c.Interactions[i]; in.From == cassettes.FromClient && in.Request != nil && !in.Scripted() && !unused[i+1] {
			used = append(used, i+1)
		}
	}
	write(childEvent{Used: used, Done: true})
	var exit *replayer.ExitError
	if errors.As(serveErr, &exit) {
		return exit.Status, nil
	}
	return 0, serveErr
}

// childJournal is what the Command processes journaled so far.
type childJournal struct {
	calls []Call
	used  map[int]bool // recorded requests used by some process
}

// childEvents reads the journals of the Command processes, each process in
// the order it started.
func (s *Server) childEvents() childJournal {
	j := childJournal{used: map[int]bool{}}
	s.mu.Lock()
	dir, final := s.childDir, s.finalChildren
	s.mu.Unlock()
	if final != nil {
		return *final
	}
	if dir == "" {
		return j
	}
	files, _ := filepath.Glob(filepath.Join(dir, "events-*.jsonl"))
	sort.Strings(files)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var ev childEvent
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue // a line being written
			}
			if ev.Call != nil {
				c := *ev.Call
				c.report, c.recorded = strings.TrimSpace(ev.Miss), !ev.Absent
				j.calls = append(j.calls, c)
			}
			for _, pos := range ev.Used {
				j.used[pos] = true
			}
		}
		fh.Close()
	}
	return j
}
