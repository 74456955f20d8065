package mcpclient_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/mcpmock/mcpmock/internal/mcpclient"
)

// answerOf is a RoundTripper that answers every request with one body.
type answerOf struct {
	status int
	ctype  string
	body   []byte
}

func (a answerOf) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: a.status, Header: http.Header{"Content-Type": {a.ctype}}, ContentLength: -1,
		Body: io.NopCloser(bytes.NewReader(a.body)), Request: r,
	}, nil
}

// FuzzAnswer: whatever a server answers, the client hands over only
// messages within the limit that begin as JSON does (what does not parse
// is passed on for the caller to keep as raw text; an element of a batch
// may be any value), and does not panic or hang.
func FuzzAnswer(f *testing.F) {
	f.Add(200, "application/json", []byte(`[{"jsonrpc":"2.0","id":2,"result":{}}]`))
	f.Add(200, "text/event-stream", []byte("id: 1\nretry: 0\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"))
	f.Add(404, "text/plain", []byte("gone"))
	f.Add(200, "text/event-stream", []byte("data: [1,2,{}]\n\nid: x\n\n"))
	f.Fuzz(func(t *testing.T, status int, ctype string, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		const max = 256
		c, err := mcpclient.New("http://127.0.0.1:1/mcp", &mcpclient.Options{
			Client:     &http.Client{Transport: answerOf{status, ctype, body}},
			MaxMessage: max, Resumes: 2, MaxRetry: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		c.Post(t.Context(), echoCall, &mcpclient.Handler{Message: func(m mcpclient.Message) bool {
			whole := m.Data
			if m.Batch != nil {
				whole = m.Batch // an element of a batch may be anything
			}
			if len(whole) > max || len(m.Data) == 0 || (whole[0] != '{' && whole[0] != '[') {
				t.Errorf("handed over %q", m.Data)
			}
			return false
		}})
	})
}
