package cassettes

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Capture is another tool's recording of an MCP session, read by one of the
// importers (ImportHAR, ImportLines, ImportMCPSnoop): what passed, in the
// order it passed, as a tap would have observed it. It is not a cassette
// yet: recorder.Import groups its events into interactions exactly as the
// tap does when it records, and redacts them as record does, so that an
// imported cassette is the one mcpmock would have recorded.
type Capture struct {
	// Format names the importer ("har", "lines", "mcpsnoop").
	Format string
	// Meta is what the source says about the recording: the transport,
	// the server (its command line or URL), the tool that wrote it
	// (RecordedBy) and when (RecordedAt, RFC 3339).
	Meta Meta
	// Start is the time of the recording's first message; zero when the
	// source has no times (every offset is then 0).
	Start time.Time
	// Events are what passed, in order.
	Events []CaptureEvent
	// Warnings say what the importer kept in a form of its own (a message
	// that is not JSON-RPC, kept as raw text) or left out (an entry that is
	// not MCP), each naming its place in the source.
	Warnings []string
}

// CaptureEvent is one thing that passed: a message (or a batch, or a line
// that is not JSON-RPC, kept raw) from one side, or, over HTTP, the
// response to an exchange (Data nil, HTTP.Response set).
type CaptureEvent struct {
	From Direction
	// At is when it passed; zero when the source has no times.
	At time.Time
	// Data is the message, the batch or the raw line; nil for a response.
	Data []byte
	// HTTP is how it travelled over HTTP; nil on stdio.
	HTTP *CaptureHTTP
}

// CaptureHTTP is how an event travelled over HTTP, as the HTTP tap notes
// it. The headers are all those of the source: the recorder keeps those
// that matter and redacts the secrets among them, as it does when it
// records.
type CaptureHTTP struct {
	// Exchange numbers the HTTP request (from 1): the client's messages in
	// its body and the server's in its response share it. 0 places a
	// server message as on stdio (by its id), as the HTTP+SSE transport's
	// stream needs.
	Exchange uint64
	// Stream is "get" for a server message on a GET stream of Streamable
	// HTTP (it belongs to no request); "" otherwise.
	Stream string
	// EventID is the SSE event id of a server message, when HasEventID.
	EventID    string
	HasEventID bool
	// URL is the request's URL (on client messages); RequestHeaders its
	// headers.
	URL            string
	RequestHeaders map[string][]string
	// Response marks the response to the exchange: its Status, its Form
	// ("json", "sse" or "none"), its headers and a body that is not
	// JSON-RPC.
	Response        bool
	Status          int
	Form            string
	ResponseHeaders map[string][]string
	Body            string
}

// ErrImport is the error of a capture that cannot be imported; the error
// names the file and the line or entry. Compare with errors.Is.
var ErrImport = errors.New("cannot import")

// importError is an error at a place of a source file.
type importError struct {
	name  string // the file
	where string // "line 3", "entry 2"
	msg   string
}

func (e *importError) Error() string {
	if e.where == "" {
		return fmt.Sprintf("import %q: %s", e.name, e.msg)
	}
	return fmt.Sprintf("import %q: %s: %s", e.name, e.where, e.msg)
}

func (e *importError) Is(target error) bool { return target == ErrImport }

// Importer reads a capture of one format; name is used in errors and
// warnings.
type Importer func(name string, data []byte) (*Capture, error)

// ImportFormats are the formats that cassette import reads, in the order
// the documentation gives them.
func ImportFormats() []string { return []string{"har", "lines", "mcpsnoop"} }

// ImporterFor returns the importer of a format (one of ImportFormats); nil
// for an unknown one.
func ImporterFor(format string) Importer {
	switch format {
	case "har":
		return ImportHAR
	case "lines":
		return ImportLines
	case "mcpsnoop":
		return ImportMCPSnoop
	}
	return nil
}

// notJSONRPC reports why data (a message or a batch) is not JSON-RPC, as
// the recorder would find it when it keeps it as raw text; "" when it is.
func notJSONRPC(data []byte) string {
	elems, batch, err := jsonrpc.SplitBatch(data)
	if err != nil {
		return err.Error()
	}
	if batch && len(elems) == 0 {
		return "an empty batch"
	}
	for i, el := range elems {
		if _, err := jsonrpc.Parse(el); err != nil {
			if batch {
				return fmt.Sprintf("element %d of the batch: %v", i, err)
			}
			return err.Error()
		}
	}
	return ""
}

// keepMessage appends a message event to cp, with a warning naming where
// when the recorder will keep it as raw text.
func (cp *Capture) keepMessage(where string, ev CaptureEvent) {
	if why := notJSONRPC(ev.Data); why != "" {
		cp.Warnings = append(cp.Warnings, fmt.Sprintf("%s: not JSON-RPC (%s); kept as raw text", where, why))
	}
	cp.Events = append(cp.Events, ev)
}
