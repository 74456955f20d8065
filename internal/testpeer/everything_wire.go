package testpeer

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// This file puts what a client's transport carries on a wireLog, as the
// bytes go out and come in: a message the client sends before it is
// written, one it receives as the transport reads it, before the client
// handles it. (A wrapped mcp.Connection would lose the go-sdk's standalone
// GET stream, which it starts through an unexported method.)

// addLine adds the JSON-RPC message (or batch) in line, if it is one.
func (l *wireLog) addLine(out bool, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) == nil {
			for _, m := range batch {
				l.addLine(out, m)
			}
		}
		return
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		l.addText(out, "not JSON-RPC "+string(line))
		return
	}
	l.add(out, msg)
}

// lineSplitter cuts what is read into lines.
type lineSplitter struct {
	mu   sync.Mutex // guards part
	part []byte     // the line read so far
}

// feed adds p and calls line with each line it completes.
func (s *lineSplitter) feed(p []byte, line func([]byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part = append(s.part, p...)
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			return
		}
		line(s.part[:i])
		s.part = s.part[i+1:]
	}
}

// wiredReader reads from r and adds each complete line to w.
type wiredReader struct {
	r     io.ReadCloser
	w     *wireLog
	lines lineSplitter
}

func (r *wiredReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.lines.feed(p[:n], func(line []byte) { r.w.addLine(false, line) })
	return n, err
}

func (r *wiredReader) Close() error { return r.r.Close() }

// wiredWriter adds each line written to it to w, then writes it.
type wiredWriter struct {
	io.WriteCloser
	w *wireLog
}

func (w wiredWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(p, []byte("\n")) {
		w.w.addLine(true, line)
	}
	return w.WriteCloser.Write(p)
}

// wiredRoundTripper adds the message of each POST to w before it goes out,
// and the messages of each response as the client reads them: the data of
// each SSE event, or the JSON body.
type wiredRoundTripper struct {
	base http.RoundTripper
	w    *wireLog
}

func (t wiredRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		t.w.addLine(true, body)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseTee{ReadCloser: resp.Body, w: t.w}
	case strings.HasPrefix(ct, "application/json") && resp.StatusCode == http.StatusOK:
		resp.Body = &jsonTee{ReadCloser: resp.Body, w: t.w}
	}
	return resp, nil
}

// sseTee adds the data of each SSE event line read through it.
type sseTee struct {
	io.ReadCloser
	w     *wireLog
	lines lineSplitter
}

func (s *sseTee) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.lines.feed(p[:n], func(line []byte) {
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			s.w.addLine(false, data)
		}
	})
	return n, err
}

// jsonTee adds the JSON body read through it when it ends.
type jsonTee struct {
	io.ReadCloser
	w    *wireLog
	mu   sync.Mutex // guards body and done
	body []byte
	done bool
}

func (j *jsonTee) Read(p []byte) (int, error) {
	n, err := j.ReadCloser.Read(p)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.body = append(j.body, p[:n]...)
	if err == io.EOF && !j.done {
		j.done = true
		j.w.addLine(false, j.body)
	}
	return n, err
}
