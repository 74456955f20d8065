package mcpmocktest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// recording is one in-process session recorded through the stdio tap.
type recording struct {
	mu  sync.Mutex // guards rec
	rec *recorder.Recorder
}

func (r *recording) recorder() *recorder.Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

// meta describes the recording in the cassette.
func (s *Server) meta(transport string) cassettes.Meta {
	m := s.opts.Meta
	if m.RecordedBy == "" {
		m.RecordedBy = "mcpmocktest"
	}
	if m.Transport == "" {
		m.Transport = transport
	}
	if m.Server == nil {
		m.Server = s.opts.Upstream
		if s.opts.UpstreamURL != "" {
			m.Server = []string{s.opts.UpstreamURL}
		}
	}
	return m
}

// upstreamName names the live server in messages.
func (s *Server) upstreamName() string {
	if s.opts.UpstreamURL != "" {
		return s.opts.UpstreamURL
	}
	return fmt.Sprintf("%q", s.opts.Upstream)
}

func (s *Server) upstreamStderr() io.Writer {
	if s.opts.UpstreamStderr != nil {
		return s.opts.UpstreamStderr
	}
	return os.Stderr
}

// upstreamOptions are the live server of new-episodes.
func (s *Server) upstreamOptions() replayer.UpstreamOptions {
	return replayer.UpstreamOptions{Command: s.opts.Upstream, Env: s.opts.UpstreamEnv, URL: s.opts.UpstreamURL, Stderr: s.upstreamStderr()}
}

// newRecorder returns a recorder that keeps its cassette in memory: the
// server writes the sessions together when the test ends.
func (s *Server) newRecorder(transport string) (*recorder.Recorder, error) {
	return recorder.New("", &recorder.Options{Meta: s.meta(transport), Logger: s.opts.Logger, Save: s.opts.Save})
}

// recordSession runs the tap between an in-process client (r, w) and the
// live server: a new upstream process through the stdio tap, or
// Options.UpstreamURL through the stdio-to-HTTP bridge, until the client
// closes its end (and the upstream process exits).
func (s *Server) recordSession(rs *recording, r io.Reader, w io.Writer) {
	rec, err := s.newRecorder("stdio")
	if err != nil {
		s.report("mcpmocktest: %v", err)
		return
	}
	rs.mu.Lock()
	rs.rec = rec
	rs.mu.Unlock()
	if s.opts.UpstreamURL != "" {
		if err := recorder.StdioToHTTP(s.ctx, s.opts.UpstreamURL, r, w, rec, nil); err != nil {
			s.report("mcpmocktest: recording from %s: %v", s.opts.UpstreamURL, err)
		}
		return
	}
	status, err := recorder.Stdio(s.ctx, s.opts.Upstream, r, w, s.upstreamStderr(), rec, &recorder.StdioOptions{Env: s.opts.UpstreamEnv})
	switch {
	case err != nil:
		s.report("mcpmocktest: recording from %q: %v", s.opts.Upstream, err)
	case status != 0:
		s.logf("mcpmocktest: the upstream %q exited with status %d", s.opts.Upstream, status)
	}
}

// httpTap is what URL serves in record and passthrough mode: the HTTP tap
// in front of Options.UpstreamURL, or the bridge to an upstream process.
type httpTap struct {
	handler http.Handler
	rec     *recording
	tap     *recorder.HTTP        // UpstreamURL
	bridge  *recorder.StdioBridge // Upstream
}

func (s *Server) newHTTPTap() (*httpTap, error) {
	rec, err := s.newRecorder("streamable-http")
	if err != nil {
		return nil, err
	}
	t := &httpTap{rec: &recording{rec: rec}}
	if s.opts.UpstreamURL != "" {
		t.tap, err = recorder.NewHTTP(s.opts.UpstreamURL, rec, &recorder.HTTPOptions{Logger: s.opts.Logger})
		t.handler = t.tap
	} else {
		t.bridge, err = recorder.NewStdioBridge(s.opts.Upstream, s.upstreamStderr(), rec, &recorder.BridgeOptions{Env: s.opts.UpstreamEnv, Logger: s.opts.Logger})
		t.handler = t.bridge
	}
	if err != nil {
		rec.Close()
		return nil, err
	}
	return t, nil
}

// closeStreams ends the event streams still open, so that the HTTP server
// can close.
func (t *httpTap) closeStreams() {
	if t.tap != nil {
		t.tap.CloseStreams()
	} else {
		t.bridge.CloseStreams()
	}
}

// close stops the upstream process of a bridge.
func (t *httpTap) close(s *Server) {
	if t.bridge == nil {
		return
	}
	status, err := t.bridge.Close()
	switch {
	case err != nil:
		s.report("mcpmocktest: recording from %q: %v", s.opts.Upstream, err)
	case status != 0:
		s.logf("mcpmocktest: the upstream %q exited with status %d", s.opts.Upstream, status)
	}
}

// recordedCassettes returns the cassettes recorded so far: the in-process
// sessions in the order they started, then the Command processes in the
// order they started. final closes the recorders first.
func (s *Server) recordedCassettes(recs []*recording, final bool) []*cassettes.Cassette {
	s.mu.Lock()
	done := s.finalRecorded
	s.mu.Unlock()
	if done != nil {
		return done
	}
	var out []*cassettes.Cassette
	for _, rs := range recs {
		rec := rs.recorder()
		if rec == nil {
			continue
		}
		if final {
			if err := rec.Close(); err != nil {
				s.report("mcpmocktest: %v", err)
			}
		}
		out = append(out, rec.Cassette())
	}
	s.mu.Lock()
	dir := s.childDir
	s.mu.Unlock()
	if dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "rec-*.json"))
		sort.Strings(files)
		for _, f := range files {
			c, err := cassettes.Load(f)
			if err != nil {
				if final {
					s.report("mcpmocktest: a recording process left a broken cassette: %v", err)
				}
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

// saveRecording writes the sessions recorded into the cassette, one after
// the other, redacted and normalised as mcpmock record saves (Options.Save).
// Passthrough writes nothing.
func (s *Server) saveRecording() {
	s.mu.Lock()
	recs := s.recordings
	s.mu.Unlock()
	recorded := s.recordedCassettes(recs, true)
	s.mu.Lock()
	s.finalRecorded = append([]*cassettes.Cassette{}, recorded...)
	s.mu.Unlock()
	if s.mode == ModePassthrough {
		return
	}
	if len(recorded) == 0 {
		s.logf("mcpmocktest: record mode: no session was opened; %s is left as it was", s.path)
		return
	}
	if !anyCompleted(recorded) {
		// A record that failed at once (the upstream did not start or
		// answer) writes no file: an existing cassette is not replaced by
		// an empty one, and ModeOnce records again next time.
		s.logf("mcpmocktest: record mode: no interaction completed; %s is left as it was", s.path)
		return
	}
	c := cassettes.New()
	transport := recorded[0].Meta.Transport
	if transport == "" {
		transport = "stdio" // a Command process
	}
	c.Meta = s.meta(transport)
	c.Meta.RecordedAt = recorded[0].Meta.RecordedAt
	for _, r := range recorded {
		c.Interactions = append(c.Interactions, r.Interactions...)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		s.report("mcpmocktest: %v", err)
		return
	}
	if err := s.finishAndSave(c); err != nil {
		s.report("mcpmocktest: %v", err)
		return
	}
	s.logf("mcpmocktest: recorded %d interactions to %s", len(c.Interactions), s.path)
}

// anyCompleted reports whether one of the recorded cassettes holds a
// completed interaction (cassettes.Interaction.Completed).
func anyCompleted(recorded []*cassettes.Cassette) bool {
	for _, c := range recorded {
		for i := range c.Interactions {
			if c.Interactions[i].Completed() {
				return true
			}
		}
	}
	return false
}

// finishAndSave redacts and normalises c (cassettes.Finisher) and writes it.
func (s *Server) finishAndSave(c *cassettes.Cassette) error {
	fin, err := cassettes.NewFinisher(&s.opts.Save)
	if err != nil {
		return err
	}
	fin.Finish(c)
	return cassettes.Save(s.path, c)
}

// saveEpisodes appends what new-episodes learnt from the live server, in
// this process and in Command processes, to the cassette file.
func (s *Server) saveEpisodes() {
	eps := s.engine.NewEpisodes()
	s.mu.Lock()
	dir := s.childDir
	s.mu.Unlock()
	if dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "episodes-*.json"))
		sort.Strings(files)
		for _, f := range files {
			c, err := cassettes.Load(f)
			if err != nil {
				s.report("mcpmocktest: a new-episodes process left a broken file: %v", err)
				continue
			}
			eps = append(eps, c.Interactions...)
		}
	}
	if len(eps) == 0 {
		return
	}
	c, err := cassettes.Load(s.path)
	if err != nil {
		s.report("mcpmocktest: new-episodes: %v", err)
		return
	}
	c.Interactions = append(c.Interactions, eps...)
	if err := s.finishAndSave(c); err != nil {
		s.report("mcpmocktest: new-episodes: %v", err)
		return
	}
	s.logf("mcpmocktest: appended %d new episodes to %s", len(eps), s.path)
}
