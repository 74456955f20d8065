package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// servedTarget is a cassette of a run being served: by a replay engine
// behind replay's HTTP listener (the replaying modes) or by record's HTTP
// tap (record, and once without the cassette), and by a bridge for stdio
// clients either way.
type servedTarget struct {
	*runTarget
	url    string     // the client-facing Streamable HTTP endpoint
	bridge *runBridge // the way in of stdio clients
	argv   []string   // the command of a stdio client, __connect
	done   chan servedEnd

	// The replaying modes.
	cas      *cassettes.Cassette
	eng      *replayer.Engine
	misses   *missLog
	upstream *replayer.Upstream // new-episodes

	// The recording modes.
	rec *recorder.Recorder
}

// servedEnd is how a target's server ended: the recorded server's status
// and the error that ended it, if any.
type servedEnd struct {
	status int
	err    error
}

// runServed are the cassettes of a run while the tests run.
type runServed struct {
	cancel  context.CancelFunc
	targets []*servedTarget
}

// missLog keeps the misses of one cassette, for the summary and the
// reports; beyond maxMisses it only counts them.
type missLog struct {
	n      atomic.Int64 // every miss
	mu     sync.Mutex   // guards misses
	misses []replayer.Miss
}

// maxMisses is how many misses of a cassette a run keeps explained.
const maxMisses = 1000

func (m *missLog) add(miss replayer.Miss) {
	m.n.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.misses) < maxMisses {
		m.misses = append(m.misses, miss)
	}
}

func (m *missLog) list() []replayer.Miss {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]replayer.Miss(nil), m.misses...)
}

// urlCatcher passes what a server writes to its stderr on, but for its
// "listening on" line (httpguard.URLLine), whose URL it delivers once, for
// run to print a line that names the cassette.
type urlCatcher struct {
	w    io.Writer
	mu   sync.Mutex // guards seen
	seen bool
	url  chan string
}

var urlLine = regexp.MustCompile(`listening on (http://\S+)`)

func (u *urlCatcher) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.seen {
		if m := urlLine.FindSubmatch(p); m != nil {
			u.seen = true
			u.url <- string(m[1])
			return len(p), nil
		}
	}
	return u.w.Write(p)
}

// serveTargets starts serving every cassette of the run; on an error it
// stops those it started.
func (e *env) serveTargets(ctx context.Context, c *common, r *replayFlags, targets []*runTarget, log *slog.Logger, ui *webUI) (*runServed, error) {
	exe, err := executable()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &runServed{cancel: cancel}
	for _, t := range targets {
		st, err := e.serveTarget(ctx, c, r, t, ui.logger(t.name, log))
		if st != nil {
			s.targets = append(s.targets, st) // stop waits for its server
		}
		if err != nil {
			s.stop(e, c, r)
			return nil, fmt.Errorf("cassette %s: %w", t.name, err)
		}
		st.argv = st.bridge.argv(exe)
	}
	return s, nil
}

// serveTarget serves one cassette until ctx ends. On an error after its
// server started, it returns the target too, for stop to wait for it.
func (e *env) serveTarget(ctx context.Context, c *common, r *replayFlags, t *runTarget, log *slog.Logger) (*servedTarget, error) {
	st := &servedTarget{runTarget: t, done: make(chan servedEnd, 1)}
	catcher := &urlCatcher{w: e.stderr, url: make(chan string, 1)}
	sub := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: catcher}
	var serveStdio func(ctx context.Context, r io.Reader, w io.Writer) error
	if t.plan.Replay {
		cas, err := cassettes.Load(t.path)
		if err != nil {
			return nil, err
		}
		if err := r.mf.checkAge(cas, c.summaryLogger(e.stderr), time.Now()); err != nil {
			return nil, err
		}
		opts, err := r.options(cas, log)
		if err != nil {
			return nil, err
		}
		st.cas, st.misses = cas, &missLog{}
		opts.OnMiss = st.misses.add
		if t.plan.Append {
			u, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: t.live, URL: t.url, Stderr: e.stderr})
			if err != nil {
				return nil, err
			}
			st.upstream, opts.Upstream = u, u
		}
		if st.eng, err = replayer.New(cas, opts); err != nil {
			st.closeUpstream()
			return nil, err
		}
		replayingUI(log, cas, st.eng) // ui.go
		h := r.h
		h.listen = "127.0.0.1:0"
		notifyOnSignal(ctx, st.eng, log) // replay_signal_unix.go: SIGUSR1 sends a tools/list_changed
		go func() { st.done <- servedEnd{err: h.serve(ctx, sub, st.eng, log, nil)} }()
		serveStdio = st.eng.Serve
	} else {
		save, err := r.mf.saveOptions()
		if err != nil {
			return nil, err
		}
		path := t.path
		if !t.plan.Write {
			path = "" // passthrough
		}
		rh := recordHTTPFlags{upstream: t.url, listen: "127.0.0.1:0", authToken: r.h.authToken, allowOrigins: r.h.allowOrigins, limits: r.h.limits}
		meta := cassettes.Meta{RecordedBy: "mcpmock " + version, Transport: "stdio", Server: t.live}
		rh.meta(&meta)
		if st.rec, err = recorder.New(path, &recorder.Options{Logger: log, Meta: meta, Save: save}); err != nil {
			return nil, err
		}
		go func() {
			status, err := rh.run(ctx, sub, t.live, st.rec, log)
			st.done <- servedEnd{status, err}
		}()
		serveStdio = func(ctx context.Context, in io.Reader, out io.Writer) error {
			return st.recordStdio(ctx, in, out, r.h.authToken)
		}
	}
	select {
	case st.url = <-catcher.url:
	case end := <-st.done:
		st.closeUpstream()
		if st.rec != nil {
			st.rec.Close()
		}
		if end.err == nil {
			end.err = fmt.Errorf("its server ended before it listened")
		}
		return nil, end.err
	}
	b, err := newRunBridge(ctx, serveStdio)
	if err != nil {
		return st, err
	}
	st.bridge = b
	fmt.Fprintf(e.stderr, "mcpmock: run: %s: listening on %s (MCPMOCK_URL_%s; stdio clients: MCPMOCK_COMMAND_%s)\n", t.name, st.url, t.suffix, t.suffix)
	return st, nil
}

// recordStdio serves a stdio client of a recording run through the tap's
// HTTP endpoint, so that the tap records its session with the others; the
// bridge's own recorder writes nothing.
func (st *servedTarget) recordStdio(ctx context.Context, in io.Reader, out io.Writer, token string) error {
	none, err := recorder.New("", &recorder.Options{Logger: livelog.Discard})
	if err != nil {
		return err
	}
	defer none.Close()
	var client *http.Client
	if token != "" {
		client = &http.Client{Transport: bearer{token, http.DefaultTransport}}
	}
	return recorder.StdioToHTTP(ctx, st.url, in, out, none, &recorder.BridgeOptions{Client: client})
}

// bearer adds the listener's --auth-token to the requests of recordStdio.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (st *servedTarget) closeUpstream() {
	if st.upstream != nil {
		st.upstream.Close()
	}
}

// environ is env with the variables of the run: for each cassette its URL
// (MCPMOCK_URL_<NAME>) and the command of a stdio client
// (MCPMOCK_COMMAND_<NAME>, as shell words; MCPMOCK_ARGV_<NAME>, as a JSON
// array), the first cassette's also without the suffix.
func (s *runServed) environ(env []string) []string {
	for i, t := range s.targets {
		vars := []struct{ name, value string }{
			{"MCPMOCK_URL", t.url},
			{"MCPMOCK_COMMAND", joinWords(t.argv)},
			{"MCPMOCK_ARGV", jsonWords(t.argv)},
		}
		for _, v := range vars {
			env = append(env, v.name+"_"+t.suffix+"="+v.value)
			if i == 0 {
				env = append(env, v.name+"="+v.value)
			}
		}
	}
	return env
}

// stop stops serving and returns how each cassette's serving went.
func (s *runServed) stop(e *env, c *common, r *replayFlags) []runResult {
	s.cancel()
	var out []runResult
	for _, t := range s.targets {
		if t.bridge != nil {
			t.bridge.close()
		}
		end := <-t.done
		t.closeUpstream()
		res := runResult{target: t, serveErr: end.err}
		if t.eng != nil {
			res.stats, res.misses, res.unused, res.scripts = t.eng.Stats(), t.misses.list(), t.eng.Unused(), t.eng.Scripts()
			res.missed = t.misses.n.Load()
			c.summaryLogger(e.stderr).Info(fmt.Sprintf("run: %s: replayed %s", t.name, res.stats))
			if err := r.mf.afterReplay(t.path, t.cas, t.eng, c.summaryLogger(e.stderr)); err != nil && res.serveErr == nil {
				res.serveErr = err
			}
		} else {
			res.serveErr = e.endRecording(c, t.rec, "run: "+t.name+": ", end.status, end.err)
			res.recorded = t.rec.Summary()
		}
		out = append(out, res)
	}
	return out
}
