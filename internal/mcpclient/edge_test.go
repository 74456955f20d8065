package mcpclient_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/internal/mcpclient"
)

// newClient serves h on loopback and returns a client of its /mcp.
func newClient(t *testing.T, h http.HandlerFunc, opts *mcpclient.Options) (*mcpclient.Client, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := mcpclient.New(srv.URL+"/mcp", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv.URL + "/mcp"
}

// record is what a handler saw, as lines to compare.
type record []string

func (r *record) handler() *mcpclient.Handler {
	return &mcpclient.Handler{
		Answer: func(a *mcpclient.Answer) {
			*r = append(*r, fmt.Sprintf("answer %d %s resumed=%v", a.Status, a.Form, a.Resumed))
		},
		Message: func(m mcpclient.Message) bool {
			line := fmt.Sprintf("message %s stream=%q", m.Data, m.Stream)
			if m.HasEventID {
				line += " id=" + m.EventID
			}
			if m.Resumed {
				line += " resumed"
			}
			if m.Batch != nil {
				line += fmt.Sprintf(" batch[%d]", m.Index)
			}
			*r = append(*r, line)
			return false
		},
		Event: func(m mcpclient.Message) { *r = append(*r, "event id="+m.EventID) },
	}
}

const (
	note  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	reply = `{"jsonrpc":"2.0","id":2,"result":{}}`
)

// TestResumeCutStream: a POST's event stream cut after an event id is
// resumed with GET and Last-Event-ID, after the server's retry delay; the
// resumed events are reported as such.
func TestResumeCutStream(t *testing.T) {
	var lastIDs []string
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.Method {
		case http.MethodPost:
			w.Header().Set(mcp.HeaderSessionID, "s1")
			fmt.Fprintf(w, "id: e0\nretry: 1\ndata:\n\nid: e1\ndata: %s\n\n", note)
		case http.MethodGet:
			lastIDs = append(lastIDs, r.Header.Get(mcp.HeaderLastEventID)+" session="+r.Header.Get(mcp.HeaderSessionID))
			fmt.Fprintf(w, "id: e2\ndata: %s\n\n", reply)
		}
	}, nil)
	var got record
	if err := c.Post(t.Context(), []byte(echoCall), got.handler()); err != nil {
		t.Fatal(err)
	}
	want := record{
		"answer 200 sse resumed=false",
		"event id=e0",
		`message ` + note + ` stream="" id=e1`,
		"answer 200 sse resumed=true",
		`message ` + reply + ` stream="" id=e2 resumed`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"e1 session=s1"}, lastIDs); diff != "" {
		t.Errorf("resumptions (-want +got)\n%s", diff)
	}
}

// TestResumeGivesUp: a stream that is cut again and again without getting
// past the event it was resumed after is resumed Options.Resumes times,
// then the exchange fails with ErrNoAnswer.
func TestResumeGivesUp(t *testing.T) {
	tests := []struct{ name, stream string }{
		{"nothing new", "id: e1\ndata:\n\n"},
		{"the same events again", "data: " + note + "\n\nid: e1\ndata:\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gets := 0
			c, url := newClient(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				if r.Method == http.MethodGet {
					gets++
				}
				if gets > 10 {
					w.WriteHeader(http.StatusGone) // the client would go on for ever
					return
				}
				io.WriteString(w, tt.stream)
			}, &mcpclient.Options{Resumes: 3})
			err := c.Post(t.Context(), []byte(echoCall), nil)
			if !errors.Is(err, mcpclient.ErrNoAnswer) || !strings.Contains(err.Error(), url) {
				t.Errorf("err = %v, want ErrNoAnswer naming %s", err, url)
			}
			if gets != 3 {
				t.Errorf("%d resumptions, want 3", gets)
			}
		})
	}
}

// TestAnswers covers the forms of an answer: 202 to a notification, a JSON
// batch, an error status with its body, and a batch missing a response.
func TestAnswers(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"x":1}}]`
	tests := []struct {
		name    string
		status  int
		ctype   string
		body    string
		post    string
		want    record
		wantErr error
		errText []string
	}{
		{name: "202 to a notification", status: http.StatusAccepted, post: string(initialized),
			want: record{"answer 202 none resumed=false"}},
		{name: "batch", status: 200, ctype: "application/json", body: batch,
			post: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
			want: record{
				"answer 200 json resumed=false",
				`message {"jsonrpc":"2.0","id":1,"result":{}} stream="" batch[0]`,
				`message {"jsonrpc":"2.0","id":2,"result":{"x":1}} stream="" batch[1]`,
			}},
		{name: "batch missing a response", status: 200, ctype: "application/json", body: `[{"jsonrpc":"2.0","id":1,"result":{}}]`,
			post: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
			want: record{
				"answer 200 json resumed=false",
				`message {"jsonrpc":"2.0","id":1,"result":{}} stream="" batch[0]`,
			},
			wantErr: mcpclient.ErrNoAnswer},
		{name: "error status", status: 500, ctype: "text/plain", body: "upstream database is down\n" + strings.Repeat("x", 500),
			post: string(echoCall), want: record{"answer 500 none resumed=false"},
			errText: []string{"POST ", "/mcp: HTTP 500 Internal Server Error: upstream database is down", "xxx…"}},
		{name: "JSON-RPC error with an error status", status: 400, ctype: "application/json", body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`,
			post:    string(echoCall),
			want:    record{"answer 400 json resumed=false", `message {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}} stream=""`},
			errText: []string{"HTTP 400 Bad Request", `"message":"bad"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}, nil)
			var got record
			err := c.Post(t.Context(), []byte(tt.post), got.handler())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && tt.errText == nil && err != nil {
				t.Errorf("err = %v, want none", err)
			}
			for _, s := range tt.errText {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("err = %v, want it to hold %q", err, s)
				}
			}
		})
	}
}

// TestExpiredSession: a 404 to a request with a session id is
// ErrSessionExpired; the client forgets the session, so that the next
// initialize starts a new one.
func TestExpiredSession(t *testing.T) {
	var sessions []string
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		sessions = append(sessions, r.Header.Get(mcp.HeaderSessionID))
		if r.Header.Get(mcp.HeaderSessionID) != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		w.Header().Set(mcp.HeaderSessionID, "old")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
	}, nil)
	collect(t, c, initialize(mcp.Version20250618))
	err := c.Post(t.Context(), []byte(echoCall), nil)
	if !errors.Is(err, mcpclient.ErrSessionExpired) || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "session not found") {
		t.Errorf("err = %v, want ErrSessionExpired with the status and body", err)
	}
	if c.Session() != "" {
		t.Errorf("Session() = %q after the 404, want none", c.Session())
	}
	collect(t, c, initialize(mcp.Version20250618))
	if diff := cmp.Diff([]string{"", "old", ""}, sessions); diff != "" {
		t.Errorf("sessions sent (-want +got)\n%s", diff)
	}
}

// TestOversize: an answer over the message limit is not read, and the
// error says so, for a JSON body and for an SSE event (whose stream is
// then not resumed).
func TestOversize(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("a", 200) + `"}}`
	tests := []struct {
		name  string
		ctype string
		body  string
		want  string
	}{
		{"json", "application/json", big, fmt.Sprintf("an answer of %d bytes is over the message limit of 100 bytes", len(big))},
		{"sse", "text/event-stream", "id: 1\ndata: " + big + "\n\n", fmt.Sprintf("an answer of %d bytes is over the message limit of 100 bytes", len(big))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gets := 0
			c, url := newClient(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets++
				}
				w.Header().Set("Content-Type", tt.ctype)
				io.WriteString(w, tt.body)
			}, &mcpclient.Options{MaxMessage: 100})
			var got record
			err := c.Post(t.Context(), []byte(echoCall), got.handler())
			if !errors.Is(err, mcpclient.ErrTooLong) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), url) {
				t.Errorf("err = %v, want ErrTooLong saying %q", err, tt.want)
			}
			for _, line := range got {
				if strings.HasPrefix(line, "message") {
					t.Errorf("a message was handed over: %s", line)
				}
			}
			if gets != 0 {
				t.Errorf("%d resumptions of a stream cut at an oversize event", gets)
			}
		})
	}
}

// TestListen reads the GET stream, resumes it when cut, and reports a
// server without one.
func TestListen(t *testing.T) {
	var lastIDs []string
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			w.Header().Set(mcp.HeaderSessionID, "s1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
		case r.Method == http.MethodGet && r.Header.Get(mcp.HeaderSessionID) == "s1":
			lastIDs = append(lastIDs, r.Header.Get(mcp.HeaderLastEventID))
			w.Header().Set("Content-Type", "text/event-stream")
			n := len(lastIDs)
			fmt.Fprintf(w, "id: g%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":%d}}\n\n", n, n)
		default:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}
	}, &mcpclient.Options{Resumes: 1})
	if err := c.Listen(t.Context(), nil); !errors.Is(err, mcpclient.ErrNoStream) || !strings.Contains(err.Error(), "HTTP 405") {
		t.Errorf("Listen without a session: %v, want ErrNoStream with 405", err)
	}
	collect(t, c, initialize(mcp.Version20251125))
	var got record
	h := got.handler()
	seen := 0
	msg := h.Message
	h.Message = func(m mcpclient.Message) bool { msg(m); seen++; return seen == 3 }
	if err := c.Listen(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	want := record{
		"answer 200 sse resumed=false",
		`message {"jsonrpc":"2.0","method":"notifications/message","params":{"n":1}} stream="get" id=g1`,
		"answer 200 sse resumed=true",
		`message {"jsonrpc":"2.0","method":"notifications/message","params":{"n":2}} stream="get" id=g2 resumed`,
		"answer 200 sse resumed=true",
		`message {"jsonrpc":"2.0","method":"notifications/message","params":{"n":3}} stream="get" id=g3 resumed`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "g1", "g2"}, lastIDs); diff != "" {
		t.Errorf("Last-Event-IDs (-want +got)\n%s", diff)
	}
}

// TestCloseDeletes: Close ends the session with DELETE, once.
func TestCloseDeletes(t *testing.T) {
	var deletes []string
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes = append(deletes, r.Header.Get(mcp.HeaderSessionID)+" "+r.Header.Get("Authorization"))
			return
		}
		w.Header().Set(mcp.HeaderSessionID, "s9")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
	}, &mcpclient.Options{Header: http.Header{"Authorization": {"Bearer x"}}})
	collect(t, c, initialize(mcp.Version20250618))
	for range 2 {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"s9 Bearer x"}, deletes); diff != "" {
		t.Errorf("DELETEs (-want +got)\n%s", diff)
	}
	if err := c.Post(t.Context(), []byte(echoCall), nil); !errors.Is(err, mcpclient.ErrClosed) {
		t.Errorf("Post after Close: %v, want ErrClosed", err)
	}
}

// TestLegacyEndpoint: an HTTP+SSE stream whose endpoint event names another
// origin, or that has none, is refused with a clear error.
func TestLegacyEndpoint(t *testing.T) {
	tests := []struct {
		name, stream, want string
	}{
		{"other origin", "event: endpoint\ndata: http://attacker.example/steal\n\n", "of another origin"},
		{"no endpoint", ": keep-alive\n\n", "the stream ended first"},
		{"a message first", "event: message\ndata: {}\n\n", `began with an event of type "message"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tt.stream)
			}, &mcpclient.Options{Transport: mcpclient.SSE})
			err := c.Post(t.Context(), initialize(mcp.Version20241105), nil)
			if !errors.Is(err, mcpclient.ErrNoEndpoint) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrNoEndpoint saying %q", err, tt.want)
			}
		})
	}
}

// TestLegacyRouting: on an HTTP+SSE stream, a response goes to the call
// that sent its request, and what answers nothing to the oldest call.
func TestLegacyRouting(t *testing.T) {
	posted := make(chan []byte)
	stream := make(chan string)
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /message?session=1\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case ev := <-stream:
					io.WriteString(w, ev)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		}
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		posted <- body
	}, &mcpclient.Options{Transport: mcpclient.SSE})
	done := make(chan record)
	go func() {
		var got record
		c.Post(t.Context(), []byte(echoCall), got.handler())
		done <- got
	}()
	<-posted
	stream <- "event: message\ndata: " + note + "\n\n"
	stream <- "id: 7\nevent: message\ndata: " + reply + "\n\n"
	got := <-done
	want := record{
		"answer 202 none resumed=false",
		`message ` + note + ` stream="sse"`,
		`message ` + reply + ` stream="sse" id=7`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestHeaders: a request carries the caller's headers, the session, the
// negotiated version and the Mcp-Method and Mcp-Name headers; the
// transport's headers win over the caller's.
func TestHeaders(t *testing.T) {
	var got []http.Header
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		w.Header().Set(mcp.HeaderSessionID, "s1")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
	}, &mcpclient.Options{Header: http.Header{"Authorization": {"Bearer a"}, mcp.HeaderSessionID: {"forged"}, "Accept": {"text/html"}}})
	collect(t, c, initialize(mcp.Version20251125))
	c.Post(t.Context(), echoCall, nil)
	h := got[1]
	want := map[string]string{
		"Authorization":           "Bearer a",
		mcp.HeaderSessionID:       "s1",
		mcp.HeaderProtocolVersion: mcp.Version20251125,
		mcp.HeaderMethod:          "tools/call",
		mcp.HeaderName:            "echo",
		"Accept":                  "application/json, text/event-stream",
		"Content-Type":            "application/json",
	}
	for k, v := range want {
		if h.Get(k) != v || len(h.Values(k)) != 1 {
			t.Errorf("%s = %q, want %q", k, h.Values(k), v)
		}
	}
	if v := got[0].Get(mcp.HeaderSessionID); v != "forged" {
		// Before the server gave one, the caller's header goes as it is.
		t.Errorf("initialize carried session %q, want the caller's", v)
	}
}

// TestLegacyClose: Close ends a call that waits on the HTTP+SSE stream,
// with ErrNoAnswer, and returns once the stream's reader is gone.
func TestLegacyClose(t *testing.T) {
	posted := make(chan struct{})
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /message\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusAccepted)
		close(posted)
	}, &mcpclient.Options{Transport: mcpclient.SSE})
	done := make(chan error)
	go func() { done <- c.Post(t.Context(), echoCall, nil) }()
	<-posted
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, mcpclient.ErrNoAnswer) {
		t.Errorf("the waiting call returned %v, want ErrNoAnswer", err)
	}
}

// TestAutoNoEndpoint: a Streamable HTTP server that refuses initialize with
// 400 and answers GET with a stream of its own (no endpoint event) is not
// taken for HTTP+SSE: after the endpoint timeout (5 s) the POST's own
// answer is the result.
func TestAutoNoEndpoint(t *testing.T) {
	c, _ := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": keep-alive\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unsupported protocol version"}}`)
	}, nil)
	var got record
	err := c.Post(t.Context(), initialize("1999-01-01"), got.handler())
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") || !strings.Contains(err.Error(), "unsupported protocol version") {
		t.Errorf("err = %v, want the POST's 400 with its body", err)
	}
	if len(got) != 2 || !strings.Contains(got[1], "unsupported protocol version") {
		t.Errorf("handed over %q, want the answer and its error", got)
	}
	if c.Transport() != mcpclient.Streamable {
		t.Errorf("Transport() = %v, want Streamable", c.Transport())
	}
}

// TestErrorsHideURLSecrets: an error of a server that does not answer names
// its URL without the password and the values of secret-named query
// parameters, as URL does.
func TestErrorsHideURLSecrets(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close() // nothing listens there now
	c, err := mcpclient.New("http://user:pa55word@"+addr+"/mcp?api_key=k3y-value&region=eu", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Post(t.Context(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), &mcpclient.Handler{})
	if err == nil {
		t.Fatal("a post to a closed port succeeded")
	}
	for _, shown := range []string{err.Error(), c.URL()} {
		if strings.Contains(shown, "pa55word") || strings.Contains(shown, "k3y-value") || !strings.Contains(shown, "region=eu") {
			t.Errorf("%q shows a secret or not the URL", shown)
		}
	}
}
