package mcpmocktest

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
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
func (s *Server) meta() cassettes.Meta {
	m := s.opts.Meta
	if m.RecordedBy == "" {
		m.RecordedBy = "mcpmocktest"
	}
	if m.Transport == "" {
		m.Transport = "stdio"
	}
	if m.Server == nil {
		m.Server = s.opts.Upstream
	}
	return m
}

// recordSession runs the stdio tap between an in-process client (r, w) and
// a new upstream process, until the client closes its end and the upstream
// exits.
func (s *Server) recordSession(rs *recording, r io.Reader, w io.Writer) {
	rec, err := recorder.New("", &recorder.Options{Meta: s.meta(), Logger: s.opts.Logger})
	if err != nil {
		s.t.Errorf("mcpmocktest: %v", err)
		return
	}
	rs.mu.Lock()
	rs.rec = rec
	rs.mu.Unlock()
	stderr := s.opts.UpstreamStderr
	if stderr == nil {
		stderr = os.Stderr
	}
	status, err := recorder.Stdio(s.ctx, s.opts.Upstream, r, w, stderr, rec, &recorder.StdioOptions{Env: s.opts.UpstreamEnv})
	switch {
	case err != nil:
		s.t.Errorf("%s: mcpmocktest: recording from %q: %v", s.origin, s.opts.Upstream, err)
	case status != 0:
		s.t.Logf("mcpmocktest: the upstream %q exited with status %d", s.opts.Upstream, status)
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
				s.t.Errorf("mcpmocktest: %v", err)
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
					s.t.Errorf("mcpmocktest: a recording process left a broken cassette: %v", err)
				}
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

// saveRecording writes the sessions recorded into the cassette, one after
// the other.
func (s *Server) saveRecording() {
	s.mu.Lock()
	recs := s.recordings
	s.mu.Unlock()
	recorded := s.recordedCassettes(recs, true)
	s.mu.Lock()
	s.finalRecorded = append([]*cassettes.Cassette{}, recorded...)
	s.mu.Unlock()
	if len(recorded) == 0 {
		s.t.Logf("mcpmocktest: record mode: no session was opened; %s is left as it was", s.path)
		return
	}
	c := cassettes.New()
	c.Meta = s.meta()
	c.Meta.RecordedAt = time.Now().UTC().Format(time.RFC3339)
	if first := recorded[0].Meta.RecordedAt; first != "" {
		c.Meta.RecordedAt = first
	}
	for _, r := range recorded {
		c.Interactions = append(c.Interactions, r.Interactions...)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		s.t.Errorf("mcpmocktest: %v", err)
		return
	}
	if err := cassettes.Save(s.path, c); err != nil {
		s.t.Errorf("mcpmocktest: %v", err)
		return
	}
	s.t.Logf("mcpmocktest: recorded %d interactions to %s", len(c.Interactions), s.path)
}
