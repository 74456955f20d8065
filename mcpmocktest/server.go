package mcpmocktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
	"github.com/mcpmock/mcpmock/replayer"
)

// Options configure a Server. The zero value (or nil) replays the cassette
// with the default matcher and fails the test on any request that matches
// nothing.
type Options struct {
	// Mode is the mode of this server when the command line (the
	// -mcpmock.record and -mcpmock.mode flags, MCPMOCK_RECORD) says
	// nothing; "" means ModeReplay. The command line wins.
	Mode Mode
	// Upstream is the live server of the modes that need one (record,
	// new-episodes, passthrough): the command line of a stdio MCP server
	// (with UpstreamEnv added to its environment). In record and
	// passthrough mode each session of the test (each Conn, each process
	// started from Command, the sessions of URL together) starts its own
	// upstream process; in new-episodes mode one upstream process answers
	// the misses of every in-process session. Replay never uses it.
	Upstream    []string
	UpstreamEnv []string
	// UpstreamURL is the live server as a Streamable HTTP endpoint
	// (http://host/mcp), instead of Upstream: URL records through the HTTP
	// tap, Conn and Command through the stdio-to-HTTP bridge.
	UpstreamURL string
	// UpstreamStderr receives the upstream server's stderr while
	// recording; nil means os.Stderr.
	UpstreamStderr io.Writer
	// Meta describes a recording in the cassette; its Server defaults to
	// Upstream (or UpstreamURL).
	Meta cassettes.Meta
	// Save says how a recording (and the new episodes) are prepared for
	// the file, as mcpmock record does: the zero value redacts with the
	// default rules (cassettes.DefaultRedactRules: Authorization, tokens,
	// keys...) and writes the time offsets as 0, so that recording the same
	// session again gives the same file.
	Save cassettes.SaveOptions

	// Stubs are scripted answers laid over the cassette, tried before it in
	// order (see Stub).
	Stubs []*Stub
	// Strict makes each recorded interaction answer at most once (or its
	// "times"): a repeated request is a miss.
	Strict bool
	// Matcher decides which recorded requests match a live one; nil means
	// matcher.Default(). The cassette's "match" configuration is layered
	// over it (see replayer.Options.Matcher). A Go
	// matcher cannot cross into the process that Command starts: Command
	// fails the test when one is set.
	Matcher matcher.Matcher
	// AllowMisses keeps a request that matches nothing from failing the
	// test: the client still gets the JSON-RPC error that explains the miss.
	AllowMisses bool
	// FailOnUnused fails the test at cleanup when a recorded request was
	// never used by any session (the handshake, and interactions that
	// answer "times": -1, excepted).
	FailOnUnused bool
	// Logger receives the live log of the traffic; nil means silent.
	Logger *slog.Logger

	// OverlayFiles are overlay cassette files (the form mcpmock replay
	// --overlay reads), relative to the test's directory; nil means none.
	// Their interactions are tried before the recording, after Overlays
	// and before Stubs. A file that is missing or broken fails the test.
	OverlayFiles []string
	// Overlays are overlay cassettes held in memory, tried before the
	// recording in order, before OverlayFiles and Stubs; nil means none.
	Overlays []*cassettes.Cassette
	// Seed seeds the random source of the overlays' probabilities and
	// random delays (replayer.Options.Seed); the same seed gives the same
	// sequence. 0 is a seed like any other.
	Seed uint64
	// Latency delays every answer (replayer.Options.Latency): Factor times
	// the recorded latency plus Fixed. The zero value answers at once.
	Latency replayer.Latency
	// PageSize, when positive, re-pages the recorded lists (tools/list,
	// resources/list, resources/templates/list, prompts/list) into pages
	// of this many items; 0 uses the cassette's "replay": {"pageSize": N},
	// or else serves the pages as recorded.
	PageSize int
	// NoSchemaValidation turns off the check of tools/call arguments
	// against the tool's recorded inputSchema. False validates: a call with
	// invalid arguments that no recorded call matches is answered as a real
	// server would (replayer.Options.NoSchemaValidation).
	NoSchemaValidation bool
}

// Server is a replay (or, in record mode, recording) MCP server that lives
// as long as the test that made it. Its ways in are URL (Streamable HTTP on
// loopback), Conn (an in-process pipe) and Command (a stdio server process);
// each connection is a new MCP session. Its methods are safe for concurrent
// use.
type Server struct {
	t      testing.TB
	path   string // "" for a cassette built in Go
	opts   Options
	mode   Mode
	origin string // file:line of the test's NewServer call

	cassette *cassettes.Cassette // replay: what is served (nil in record mode)
	overlay  *cassettes.Cassette // replay: the stubs
	engine   *replayer.Engine    // replay
	upstream *replayer.Upstream  // new-episodes: the live server
	ctx      context.Context
	cancel   context.CancelFunc
	sessions sync.WaitGroup // in-process sessions

	cmdOnce sync.Once
	cmdArgv []string
	cmdEnv  []string

	mu         sync.Mutex // guards the fields below
	closed     bool
	conns      []func() // end the server side of in-process connections
	calls      []Call   // replay: the in-process journal
	recordings []*recording
	http       *httptest.Server
	handler    *replayer.HTTPHandler // replay
	tap        *httpTap              // record, passthrough
	childDir   string                // set once Command has written its files
	// After Close: what the Command processes journaled, and what was
	// recorded, kept once the files are gone.
	finalChildren *childJournal
	finalRecorded []*cassettes.Cassette
}

// NewServer starts a server for the cassette file at path (relative to the
// test's directory, e.g. "testdata/weather.json") and stops it when the test
// ends. In replay mode (the default) a missing or broken cassette fails the
// test at once; in record mode (see Mode) the cassette is written when the
// test ends.
func NewServer(t testing.TB, path string, opts *Options) *Server {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	cmdline, err := commandLineMode()
	if err != nil {
		t.Fatalf("mcpmocktest: %v", err)
	}
	_, statErr := os.Stat(path)
	mode := decideMode(cmdline, o.Mode, true, statErr == nil)
	s := newServer(t, path, o, mode)
	if mode != ModeReplay {
		switch {
		case len(o.Upstream) == 0 && o.UpstreamURL == "":
			t.Fatalf("mcpmocktest: %s mode for %s needs the live server: Options.Upstream (a command) or Options.UpstreamURL", mode, path)
		case len(o.Upstream) > 0 && o.UpstreamURL != "":
			t.Fatalf("mcpmocktest: give the live server as Options.Upstream or as Options.UpstreamURL, not both")
		}
	}
	if forwards(mode) {
		t.Logf("mcpmocktest: %s: %s from %s", path, mode, s.upstreamName())
		return s
	}
	c, err := cassettes.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("mcpmocktest: %v\n\trecord it with: MCPMOCK_RECORD=1 go test -run '^%s$' (Options.Upstream or Options.UpstreamURL names the live server)", err, s.hinter().Test)
	}
	if err != nil {
		t.Fatalf("mcpmocktest: %v", err)
	}
	s.startReplay(c)
	return s
}

// NewServerFromCassette starts a replay server for a cassette held in
// memory, such as one built with NewCassette. It always replays.
func NewServerFromCassette(t testing.TB, c *cassettes.Cassette, opts *Options) *Server {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	s := newServer(t, "", o, ModeReplay)
	s.startReplay(c)
	return s
}

func newServer(t testing.TB, path string, o Options, mode Mode) *Server {
	t.Helper()
	s := &Server{t: t, path: path, opts: o, mode: mode, origin: callerOutside()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	t.Cleanup(s.Close)
	return s
}

// callerOutside returns file:line of the nearest caller outside this
// package: the test's line that made the server.
func callerOutside() string {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.Contains(f.Function, "mcpmock/mcpmocktest.") || strings.HasSuffix(f.File, "_test.go") {
			return fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
		}
		if !more {
			return "?"
		}
	}
}

func (s *Server) startReplay(c *cassettes.Cassette) {
	s.t.Helper()
	overlay, err := Overlay(s.opts.Stubs...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cassette, s.overlay = c, overlay
	eo := &replayer.Options{
		Matcher:            s.opts.Matcher,
		Strict:             s.opts.Strict,
		Logger:             s.opts.Logger,
		OnRequest:          s.onRequest,
		Seed:               s.opts.Seed,
		Latency:            s.opts.Latency,
		PageSize:           s.opts.PageSize,
		NoSchemaValidation: s.opts.NoSchemaValidation,
	}
	eo.Overlays = append(eo.Overlays, s.opts.Overlays...)
	for _, path := range s.opts.OverlayFiles {
		o, err := cassettes.Load(path)
		if err != nil {
			s.t.Fatalf("mcpmocktest: overlay: %v", err)
		}
		eo.Overlays = append(eo.Overlays, o)
	}
	if len(overlay.Interactions) > 0 {
		eo.Overlays = append(eo.Overlays, overlay)
	}
	if s.mode == ModeNewEpisodes {
		u, err := replayer.DialUpstream(s.upstreamOptions())
		if err != nil {
			s.t.Fatalf("mcpmocktest: new-episodes: %v", err)
		}
		s.upstream, eo.Upstream = u, u
		s.t.Logf("mcpmocktest: %s: new-episodes from %s", s.path, s.upstreamName())
	}
	e, err := replayer.New(c, eo)
	if err != nil {
		s.t.Fatalf("mcpmocktest: %v", err)
	}
	s.engine = e
}

// onRequest journals one request handled in this process and fails the
// test on a miss.
func (s *Server) onRequest(ev replayer.Event) {
	call := callOf(ev.Method, ev.Tool, ev.Arguments, ev.Params, ev.Interaction, ev.Miss)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	if ev.Miss != nil {
		s.miss(ev.Miss.Method, ev.Miss.Recorded, s.hinter().report(ev.Miss))
	}
}

// miss fails the test for a request that matched nothing, unless it is
// expected: the server/discover probe of a client of 2026-07-28 against a
// recording of the stateful era is answered -32601, as the recorded server
// did.
func (s *Server) miss(method string, recorded bool, report string) {
	if s.opts.AllowMisses || (method == "server/discover" && !recorded) {
		return
	}
	s.report("%s", report)
}

// report fails the test with a message that starts with the file and line
// of the test's NewServer call (origin), from any goroutine: a miss in a
// session, a recording that failed, what Close finds. t.Errorf would name
// the line of the calling goroutine's own stack, which inside a session is
// mcpmocktest's, so the message is written to the test's output as
// testing writes a Log line, and the test is marked failed.
func (s *Server) report(format string, args ...any) {
	s.t.Fail()
	s.logf(format, args...)
}

// logf logs a line that starts with the file and line of the test's
// NewServer call, from any goroutine (see report).
func (s *Server) logf(format string, args ...any) {
	msg := strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")
	fmt.Fprintf(s.t.Output(), "%s: %s\n", s.origin, strings.ReplaceAll(msg, "\n", "\n    "))
}

// Mode returns the mode the server runs in, as decided: ModeReplay,
// ModeRecord, ModeNewEpisodes or ModePassthrough (ModeOnce becomes one of
// the first two).
func (s *Server) Mode() Mode { return s.mode }

// Engine returns the replay engine (nil in record and passthrough mode),
// for its Stats.
func (s *Server) Engine() *replayer.Engine { return s.engine }

// Conn returns a new in-process connection to the server: a new MCP
// session over a pair of pipes, with newline-delimited JSON-RPC as on stdio
// and no socket. r carries the server's messages to the client and w the
// client's to the server; they plug straight into the go-sdk's
// &mcp.IOTransport{Reader: r, Writer: w} and mcp-go's
// transport.NewIO(r, w, nil). The session ends when the client closes w
// (or when the test ends).
func (s *Server) Conn() (r io.ReadCloser, w io.WriteCloser) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rec *recording
	if !s.closed && forwards(s.mode) {
		rec = &recording{}
		s.recordings = append(s.recordings, rec)
	}
	return s.pipeLocked(func(ctx context.Context, in io.Reader, out io.Writer) {
		if rec != nil {
			s.recordSession(rec, in, out)
			return
		}
		s.engine.Serve(ctx, in, out)
	})
}

// pipeLocked starts serve on the server side of a new pair of pipes and
// returns the client side; s.mu is held. The session ends when the client
// closes w, or at Close, which waits for it.
func (s *Server) pipeLocked(serve func(ctx context.Context, in io.Reader, out io.Writer)) (r io.ReadCloser, w io.WriteCloser) {
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	end := func() {
		serverR.CloseWithError(io.EOF)
		serverW.Close()
	}
	if s.closed {
		end()
		return clientR, clientW
	}
	s.conns = append(s.conns, end)
	s.sessions.Add(1)
	go func() {
		defer s.sessions.Done()
		defer end()
		serve(s.ctx, serverR, serverW)
	}()
	return clientR, clientW
}

// Pipe serves a new session of an engine built with replayer.New (for
// options or a front end that Server does not offer) over in-process
// pipes, as Server.Conn does, and ends it when the test ends. r carries the
// engine's messages to the client and w the client's to the engine: the
// go-sdk's &mcp.IOTransport{Reader: r, Writer: w}, mcp-go's
// transport.NewIO(r, w, nil). The session also ends when the client closes
// w. Misses are not reported to t; use replayer.Options.OnMiss.
func Pipe(t testing.TB, e *replayer.Engine) (r io.ReadCloser, w io.WriteCloser) {
	t.Helper()
	s := &Server{t: t, engine: e}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	t.Cleanup(func() {
		s.closeSessions()
		s.cancel()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pipeLocked(func(ctx context.Context, in io.Reader, out io.Writer) {
		e.Serve(ctx, in, out)
	})
}

// URL returns the Streamable HTTP endpoint of the server on loopback
// (http://127.0.0.1:PORT/mcp), started on first use. Every MCP session the
// clients open there is a new replay session. In record and passthrough
// mode the endpoint is the HTTP tap in front of Options.UpstreamURL (every
// session recorded), or, for a command (Options.Upstream), a bridge to one
// upstream process that serves one session.
func (s *Server) URL() string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.t.Fatalf("mcpmocktest: URL called after the server was closed")
	}
	if s.http == nil {
		var h http.Handler
		if forwards(s.mode) {
			tap, err := s.newHTTPTap()
			if err != nil {
				s.t.Fatalf("mcpmocktest: URL: %v", err)
			}
			s.tap, h = tap, tap.handler
			s.recordings = append(s.recordings, tap.rec)
		} else {
			s.handler = s.engine.Handler(nil)
			h = s.handler
		}
		s.http = httptest.NewServer(h)
	}
	return s.http.URL + "/mcp"
}

// Close ends every session and stops the server; it runs by itself when the
// test ends (t.Cleanup). It then reports the misses of Command sessions, the
// unused interactions (with FailOnUnused), and in record mode writes the
// cassette. Close is idempotent.
func (s *Server) Close() {
	hs, handler, tap, ok := s.closeSessions()
	if !ok {
		return
	}
	if handler != nil {
		handler.Close()
	}
	if tap != nil {
		tap.closeStreams()
	}
	if hs != nil {
		hs.Close()
	}
	if tap != nil {
		tap.close(s)
	}
	s.cancel()

	defer s.removeTempDir()
	if forwards(s.mode) {
		s.saveRecording()
		return
	}
	if s.upstream != nil {
		s.upstream.Close()
		s.saveEpisodes()
	}
	s.t.Helper()
	children := s.childEvents()
	s.mu.Lock()
	s.finalChildren = &children
	s.mu.Unlock()
	for _, ev := range children.calls {
		if ev.Missed {
			s.miss(ev.Method, ev.recorded, ev.report)
		}
	}
	if s.opts.FailOnUnused {
		s.checkUnused(children)
	}
}

// closeSessions marks the server closed, ends its in-process sessions and
// waits for them; ok is false when it was closed already.
func (s *Server) closeSessions() (hs *httptest.Server, handler *replayer.HTTPHandler, tap *httpTap, ok bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil, nil, false
	}
	s.closed = true
	conns := s.conns
	hs, handler, tap = s.http, s.handler, s.tap
	s.mu.Unlock()
	for _, end := range conns {
		end()
	}
	s.sessions.Wait()
	return hs, handler, tap, true
}

// checkUnused fails the test for each recorded request that no session (in
// this process or in a Command process) used.
func (s *Server) checkUnused(children childJournal) {
	s.t.Helper()
	for _, pos := range s.engine.Unused() {
		if children.used[pos] {
			continue
		}
		in := &s.cassette.Interactions[pos-1]
		if in.Times < 0 || handshake(in.Request) {
			continue
		}
		s.report("%s: interaction %d was never used: %s", s.name(), pos, describe(in.Request))
	}
}

func (s *Server) name() string {
	if s.path == "" {
		return "cassette"
	}
	return s.path
}

// handshake reports whether a recorded request is server/discover or
// initialize.
func handshake(request []byte) bool {
	m, err := jsonrpc.Parse(request)
	return err == nil && matcher.Handshake(m.Method)
}
