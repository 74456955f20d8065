package cassettes

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// The parts of a HAR 1.2 file (http://www.softwareishard.com/blog/har-12-spec/)
// that an import reads.
type harFile struct {
	Log *struct {
		Version string `json:"version"`
		Creator struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"creator"`
		Entries []json.RawMessage `json:"entries"`
	} `json:"log"`
}

type harEntry struct {
	StartedDateTime string  `json:"startedDateTime"`
	Time            float64 `json:"time"`
	Request         struct {
		Method   string      `json:"method"`
		URL      string      `json:"url"`
		Headers  []harHeader `json:"headers"`
		PostData *struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			// Encoding is not in HAR 1.2 for postData, but some tools
			// write it as for content.
			Encoding string `json:"encoding"`
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status  int         `json:"status"`
		Headers []harHeader `json:"headers"`
		Content struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
		} `json:"content"`
	} `json:"response"`
	Timings struct {
		Blocked float64 `json:"blocked"`
		DNS     float64 `json:"dns"`
		Connect float64 `json:"connect"`
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
	} `json:"timings"`
}

type harHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// timed is an event of a HAR with its place: the time it passed, and, for
// events of the same time, rank then seq (the order they were made in).
type timed struct {
	ev   CaptureEvent
	rank int
	seq  int
}

// ImportHAR reads a HAR 1.2 file (as browsers' developer tools, mitmproxy,
// Charles, Fiddler or a proxy's HAR export write it) of MCP over Streamable
// HTTP or the HTTP+SSE transport of 2024-11-05. Each entry is one HTTP
// exchange: the JSON-RPC message or batch of its POST body, and its
// response, JSON or an event stream (content.encoding "base64" is decoded),
// a 202 with no body, or an error with a text body. The messages of a GET
// event stream belong to no request. On HTTP+SSE, where every answer comes
// on the stream and a HAR says nothing of when each event came, an answer
// is placed after the POST of its request, and the messages before it on
// the stream just before it. Entries that carry no MCP (a page, an OAuth
// exchange) are left out with a warning. An entry that cannot be read is an
// error naming its index (log.entries[N]).
func ImportHAR(name string, data []byte) (*Capture, error) {
	var f harFile
	if err := json.Unmarshal(data, &f); err != nil {
		msg := "not a HAR file: " + jsonError(err)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := Position(data, max(se.Offset-1, 0))
			return nil, &importError{name: name, where: fmt.Sprintf("line %d, column %d", line, col), msg: msg}
		}
		return nil, &importError{name: name, msg: msg}
	}
	if f.Log == nil {
		return nil, &importError{name: name, msg: `not a HAR file: no "log" object`}
	}
	cp := &Capture{Format: "har", Meta: Meta{Transport: "streamable-http"}}
	if c := f.Log.Creator; c.Name != "" {
		cp.Meta.RecordedBy = strings.TrimSpace(c.Name + " " + c.Version)
	}
	h := &harImport{cp: cp, seen: map[string]bool{}, posts: map[string][]time.Time{}}
	for i, raw := range f.Log.Entries {
		if err := h.entry(i, raw); err != nil {
			return nil, &importError{name: name, where: fmt.Sprintf("log.entries[%d]", i), msg: err.Error()}
		}
	}
	h.placeStreams()
	slices.SortStableFunc(h.events, func(a, b timed) int {
		return cmp.Or(a.ev.At.Compare(b.ev.At), cmp.Compare(a.rank, b.rank), cmp.Compare(a.seq, b.seq))
	})
	for _, t := range h.events {
		cp.Events = append(cp.Events, t.ev)
	}
	if !slices.ContainsFunc(cp.Events, func(e CaptureEvent) bool { return e.Data != nil }) {
		return nil, &importError{name: name, msg: fmt.Sprintf("no MCP messages in its %d entries", len(f.Log.Entries))}
	}
	if !cp.Start.IsZero() {
		cp.Meta.RecordedAt = cp.Start.UTC().Format(time.RFC3339)
	}
	return cp, nil
}

// harImport is the state of one HAR import.
type harImport struct {
	cp     *Capture
	events []timed
	// seen are the SSE event ids already taken, by session and id: an
	// event that a server sent again on a resumed stream is an echo.
	seen map[string]bool
	// posts are, for placing the messages of event streams, the times of
	// the POSTs: the answer to each request (by the JSON text of its id),
	// the sending of each of the client's replies (as "r" + id) and of each
	// request that gave a progress token (as "p" + token).
	posts map[string][]time.Time
	// streams are the messages of GET event streams (of Streamable HTTP,
	// or of HTTP+SSE), placed once every POST is known (placeStreams).
	streams []*getStream
}

// getStream is the messages of one GET event stream, in order.
type getStream struct {
	legacy     bool // HTTP+SSE: every server message comes on it
	start, end time.Time
	events     []CaptureEvent
}

func (h *harImport) add(ev CaptureEvent, rank int) {
	h.events = append(h.events, timed{ev: ev, rank: rank, seq: len(h.events)})
}

// entry reads log.entries[i].
func (h *harImport) entry(i int, raw json.RawMessage) error {
	var e harEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("not a HAR entry: %s", jsonError(err))
	}
	start, err := time.Parse(time.RFC3339Nano, e.StartedDateTime)
	if err != nil {
		return fmt.Errorf("startedDateTime %q is not an ISO 8601 time", e.StartedDateTime)
	}
	u, err := url.Parse(e.Request.URL)
	if err != nil || e.Request.Method == "" {
		return fmt.Errorf("request: no method or no valid URL (%q)", e.Request.URL)
	}
	reqH, respH := harHeaders(e.Request.Headers), harHeaders(e.Response.Headers)
	var body []byte
	if pd := e.Request.PostData; pd != nil {
		if body, err = harText(pd.Text, pd.Encoding); err != nil {
			return fmt.Errorf("request.postData: %w", err)
		}
	}
	body = bytes.TrimSpace(body)
	content := e.Response.Content
	respBody, err := harText(content.Text, content.Encoding)
	if err != nil {
		return fmt.Errorf("response.content: %w", err)
	}
	ct := mediaType(http.Header(respH).Get("Content-Type"))
	if ct == "" {
		ct = mediaType(content.MimeType)
	}
	isPost := e.Request.Method == http.MethodPost
	jsonBody := isPost && len(body) > 0 && (body[0] == '{' || body[0] == '[')
	if !jsonBody && ct != "text/event-stream" && !mcpHeaders(reqH) && !mcpHeaders(respH) {
		h.cp.Warnings = append(h.cp.Warnings, fmt.Sprintf("log.entries[%d]: %s %s carries no MCP; left out", i, e.Request.Method, u.Path))
		return nil
	}
	if h.cp.Start.IsZero() || start.Before(h.cp.Start) {
		h.cp.Start = start
	}
	if h.cp.Meta.Server == nil {
		h.cp.Meta.Server = []string{(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()}
	}
	ex := uint64(i + 1)
	where := fmt.Sprintf("log.entries[%d]", i)
	// The response's headers came after the request was sent and the
	// server thought; a HAR has no time for each event of a stream.
	at := start.Add(ms(e.Timings.Blocked) + ms(e.Timings.DNS) + ms(e.Timings.Connect) + ms(e.Timings.Send) + ms(e.Timings.Wait))
	end := start.Add(ms(e.Time))
	if isPost && len(body) > 0 {
		ev := CaptureEvent{From: FromClient, At: start, Data: body,
			HTTP: &CaptureHTTP{Exchange: ex, URL: u.RequestURI(), RequestHeaders: reqH}}
		if why := notJSONRPC(body); why != "" {
			h.cp.Warnings = append(h.cp.Warnings, fmt.Sprintf("%s: request.postData: not JSON-RPC (%s); kept as raw text", where, why))
		}
		h.add(ev, 0)
		h.notePost(body, start, at)
	}
	form := harForm(ct, e.Response.Status, respBody)
	session := cmp.Or(http.Header(reqH).Get(mcp.HeaderSessionID), http.Header(respH).Get(mcp.HeaderSessionID))
	if e.Request.Method != http.MethodGet {
		note := &CaptureHTTP{Exchange: ex, Response: true, Status: e.Response.Status, Form: form, ResponseHeaders: respH}
		trimmed := bytes.TrimSpace(respBody)
		isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
		if form != "sse" && len(trimmed) > 0 && !isJSON {
			note.Body = string(respBody)
		}
		h.add(CaptureEvent{From: FromServer, At: at, HTTP: note}, 0)
		if form != "sse" && isJSON {
			if why := notJSONRPC(trimmed); why != "" {
				h.cp.Warnings = append(h.cp.Warnings, fmt.Sprintf("%s: response.content: not JSON-RPC (%s); kept as raw text", where, why))
			}
			h.add(CaptureEvent{From: FromServer, At: at, Data: trimmed, HTTP: &CaptureHTTP{Exchange: ex}}, 0)
		}
	}
	if form != "sse" {
		return nil
	}
	if len(bytes.TrimSpace(respBody)) == 0 && isPost {
		// Browsers leave the body of a stream out of their HAR when they
		// did not keep it.
		h.cp.Warnings = append(h.cp.Warnings, fmt.Sprintf("%s: the event stream's body is not in the HAR: its messages are missing", where))
	}
	return h.stream(where, e.Request.Method, ex, session, respBody, at, end)
}

// stream reads the events of an event stream.
func (h *harImport) stream(where, method string, ex uint64, session string, body []byte, at, end time.Time) error {
	d := jsonrpc.NewSSEDecoder(len(body) + 1)
	evs := d.Feed(nil, body)
	if last, ok := d.Flush(); ok {
		evs = append(evs, last)
	}
	stream := ""
	if method == http.MethodGet {
		stream = "get"
	}
	var gs *getStream
	if stream != "" {
		gs = &getStream{start: at, end: end}
		h.streams = append(h.streams, gs)
	}
	for k, ev := range evs {
		if ev.Type == "endpoint" && ev.Data != nil && method == http.MethodGet {
			// The HTTP+SSE transport of 2024-11-05: every server message
			// comes on this stream, placed by its id as on stdio.
			h.cp.Meta.Transport = "sse"
			gs.legacy = true
			continue
		}
		if ev.Type != "" && ev.Type != "message" {
			continue
		}
		if ev.HasID && ev.ID != "" {
			key := session + "\x00" + ev.ID
			if h.seen[key] {
				continue // an echo of a resumed stream
			}
			h.seen[key] = true
		}
		switch {
		case ev.Data != nil && !jsonrpc.NoMessage(ev.Data):
			data := bytes.TrimSpace(ev.Data)
			if why := notJSONRPC(data); why != "" {
				h.cp.Warnings = append(h.cp.Warnings, fmt.Sprintf("%s: response.content: event %d: not JSON-RPC (%s); kept as raw text", where, k, why))
			}
			switch {
			case gs != nil && gs.legacy:
				gs.events = append(gs.events, CaptureEvent{From: FromServer, Data: data, HTTP: &CaptureHTTP{EventID: ev.ID, HasEventID: ev.HasID}})
			case gs != nil:
				gs.events = append(gs.events, CaptureEvent{From: FromServer, Data: data, HTTP: &CaptureHTTP{Exchange: ex, Stream: stream, EventID: ev.ID, HasEventID: ev.HasID}})
			default:
				h.add(CaptureEvent{From: FromServer, At: at, Data: data, HTTP: &CaptureHTTP{Exchange: ex, EventID: ev.ID, HasEventID: ev.HasID}}, 0)
			}
		case ev.HasID && stream == "":
			// A priming event: an id for resumption, no message.
			h.add(CaptureEvent{From: FromServer, At: at, HTTP: &CaptureHTTP{Exchange: ex, Response: true, EventID: ev.ID, HasEventID: true}}, 0)
		}
	}
	return nil
}

// notePost notes the ids of the requests and responses a POST carried,
// sent at start and answered (its response's headers) at answered.
func (h *harImport) notePost(body []byte, start, answered time.Time) {
	elems, _, err := jsonrpc.SplitBatch(body)
	if err != nil {
		return
	}
	for _, el := range elems {
		msg, err := jsonrpc.Parse(el)
		if err != nil {
			continue
		}
		switch msg.Kind() {
		case jsonrpc.KindRequest:
			h.posts[string(msg.ID)] = append(h.posts[string(msg.ID)], answered)
			if tok := gjson.GetBytes(el, "params._meta.progressToken"); tok.Exists() {
				h.posts["p"+tok.Raw] = append(h.posts["p"+tok.Raw], start)
			}
		case jsonrpc.KindResponse:
			h.posts["r"+string(msg.ID)] = append(h.posts["r"+string(msg.ID)], start)
		}
	}
}

// placeStreams gives the messages of each event stream a time, as a HAR
// has none for them: on HTTP+SSE an answer comes after the (first unused)
// POST of its request made while the stream was open, and on both HTTP+SSE
// and the GET stream of Streamable HTTP a server's request comes just before
// the POST of the client's reply; any other message just before the next
// message so placed (or at the stream's end), and none before the one that
// precedes it on its stream.
func (h *harImport) placeStreams() {
	for _, s := range h.streams {
		used := map[string]int{}
		post := func(key string) (time.Time, bool) {
			for k, t := range h.posts[key][used[key]:] {
				if !t.Before(s.start) {
					used[key] += k + 1
					return t, true
				}
			}
			return time.Time{}, false
		}
		// bound[k] is the latest time message k can have come: the POST
		// of its answer (HTTP+SSE), or just before the POST of the
		// client's reply to it.
		bound := make([]time.Time, len(s.events))
		exact := make([]bool, len(s.events))
		replied := make([]time.Time, len(s.events))
		for k, ev := range s.events {
			msg, err := jsonrpc.Parse(ev.Data)
			if err != nil {
				continue
			}
			switch msg.Kind() {
			case jsonrpc.KindResponse:
				if s.legacy {
					bound[k], exact[k] = post(string(msg.ID))
				}
			case jsonrpc.KindRequest:
				if r, ok := post("r" + string(msg.ID)); ok {
					bound[k], replied[k] = r.Add(-time.Nanosecond), r
				}
			case jsonrpc.KindNotification:
				// Progress came while its request was pending: just
				// after the POST of the request that gave the token.
				if tok := gjson.GetBytes(ev.Data, "params.progressToken"); tok.Exists() && msg.Method == "notifications/progress" {
					for _, t := range h.posts["p"+tok.Raw] {
						if !t.Before(s.start) {
							bound[k], exact[k] = t, true
							break
						}
					}
				}
			}
		}
		prev, lastReply := s.start, time.Time{}
		for k, ev := range s.events {
			// A message as late as the next message with a bound allows
			// (what a server sends on its own follows what caused it),
			// or at the stream's end; but one that follows a server's
			// request whose reply is known came after that reply (the
			// server awaited it), and just after it unless it has a
			// time of its own.
			t := s.end
			for j := k; j < len(s.events); j++ {
				if !bound[j].IsZero() {
					t = bound[j]
					break
				}
			}
			if !lastReply.IsZero() {
				switch {
				case exact[k]:
					// An answer or progress came after its POST.
					t = later(t, lastReply)
				case bound[k].IsZero():
					t = lastReply
				}
			}
			if !replied[k].IsZero() {
				lastReply = replied[k]
			}
			if t.Before(prev) {
				t = prev
			}
			prev = t
			ev.At = t
			// After the POST's own events of the same time (its 202).
			h.add(ev, 1)
		}
	}
}

// harHeaders returns a HAR's headers by canonical name; the pseudo-headers
// of HTTP/2 (":authority") are left out.
func harHeaders(hs []harHeader) map[string][]string {
	var m http.Header
	for _, hd := range hs {
		if hd.Name == "" || strings.HasPrefix(hd.Name, ":") {
			continue
		}
		if m == nil {
			m = http.Header{}
		}
		m.Add(hd.Name, hd.Value)
	}
	return m
}

// mcpHeaders reports headers that only MCP sends.
func mcpHeaders(h map[string][]string) bool {
	for name := range h {
		if strings.HasPrefix(name, "Mcp-") {
			return true
		}
	}
	return false
}

// harText is the text of a HAR body, decoded when its encoding is base64.
func harText(text, encoding string) ([]byte, error) {
	switch strings.ToLower(encoding) {
	case "":
		return []byte(text), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			if b, err2 := base64.RawStdEncoding.DecodeString(strings.TrimRight(text, "=")); err2 == nil {
				return b, nil
			}
			return nil, fmt.Errorf("text is not base64: %v", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown encoding %q (want base64 or none)", encoding)
}

// harForm is how a response came, as the HTTP tap names it: "sse" for an
// event stream, "none" for no body (a 202, a 204), "json" for JSON.
func harForm(ct string, status int, body []byte) string {
	switch {
	case ct == "text/event-stream":
		return "sse"
	case len(body) == 0 || status == http.StatusAccepted || status == http.StatusNoContent:
		return "none"
	case ct == "application/json":
		return "json"
	}
	return "none"
}

func mediaType(v string) string {
	ct, _, _ := mime.ParseMediaType(v)
	return ct
}

// ms is a HAR time in milliseconds as a duration; -1 (not applicable) is 0.
func ms(v float64) time.Duration {
	if v <= 0 {
		return 0
	}
	return time.Duration(v * float64(time.Millisecond))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// jsonError is a JSON decoding error as the user reads it.
func jsonError(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of file"
	}
	return err.Error()
}
