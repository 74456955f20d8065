package recorder

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

// Import builds the cassette that the tap would have recorded from another
// tool's capture (cassettes.ImportHAR, ImportLines, ImportMCPSnoop): its
// events are observed in order, at their times, by a Recorder writing no
// file, so that they are grouped into interactions exactly as when
// recording, with the HTTP headers that matter kept and secret-looking URL
// parameters redacted as the HTTP tap does; the cassette is then finished
// as a save finishes it (opts.Save: redaction, timing, server info).
// opts.Meta fills what the capture does not say. The caller saves it.
func Import(cp *cassettes.Capture, opts *Options) (*cassettes.Cassette, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	meta := cp.Meta
	from := "from " + cmp.Or(cp.Format, "a capture")
	if meta.RecordedBy != "" {
		from += " by " + meta.RecordedBy
	}
	meta.RecordedBy = strings.TrimSpace(o.Meta.RecordedBy + " (" + from + ")")
	if meta.Note == "" {
		meta.Note = o.Meta.Note
	}
	o.Meta = meta
	start := cp.Start
	if start.IsZero() {
		start = time.Now()
	}
	o.Now = func() time.Time { return start }
	finish, err := cassettes.NewFinisher(&o.Save)
	if err != nil {
		return nil, err
	}
	r, err := New("", &o)
	if err != nil {
		return nil, err
	}
	for _, ev := range cp.Events {
		at := ev.At
		if at.IsZero() {
			at = start
		}
		if ev.HTTP == nil {
			r.Observe(ev.From, ev.Data, at)
			continue
		}
		h := ev.HTTP
		note := HTTPNote{Exchange: h.Exchange, Stream: h.Stream, EventID: h.EventID, HasEventID: h.HasEventID}
		if h.Response {
			note.Status, note.Form, note.Body = h.Status, h.Form, h.Body
			note.respHeader = http.Header(h.ResponseHeaders)
			r.ObserveHTTPResponse(note, at)
			continue
		}
		if ev.From == cassettes.FromClient {
			note.reqHeader = http.Header(h.RequestHeaders)
			if note.reqHeader == nil {
				note.reqHeader = http.Header{}
			}
			if u, err := url.ParseRequestURI(h.URL); err == nil {
				note.reqURL = u
			}
		}
		r.ObserveHTTP(ev.From, ev.Data, at, note)
	}
	if err := r.Close(); err != nil {
		return nil, err
	}
	c := r.Cassette()
	finish.Finish(c)
	return c, nil
}
