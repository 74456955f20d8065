package cassettes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// When says when a scripted interaction applies: an interaction of an
// overlay, or one of a cassette that carries "when" or "fault". Calls are
// counted per replay session among the live requests that match the
// interaction. Every condition that is set must hold; the zero When applies
// to every call.
type When struct {
	// Nth applies to the Nth matching call only (1-based).
	Nth int `json:"nth,omitempty"`
	// Every applies to every Kth matching call (K, 2K, 3K...).
	Every int `json:"every,omitempty"`
	// From and To apply to the calls From to To (To 0: no end).
	From int `json:"from,omitempty"`
	To   int `json:"to,omitempty"`
	// Probability applies with this probability (0 to 1), drawn from the
	// replay's seeded random source, so a seed gives the same sequence.
	Probability float64 `json:"probability,omitempty"`
	// State applies only while the session is in this named state (the
	// initial state is ""); SetState moves the session to a state after
	// the interaction answered.
	State    string `json:"state,omitempty"`
	SetState string `json:"setState,omitempty"`
	// RateLimit applies once more than Calls matching calls came within
	// the last WindowMs milliseconds.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
}

// RateLimit is a calls-per-window limit.
type RateLimit struct {
	Calls    int     `json:"calls"`
	WindowMs float64 `json:"windowMs"`
}

// Fault is a failure scripted onto an answer: the interaction's own
// response when it has one, or else the answer the recording gives.
type Fault struct {
	// DelayMs delays the answer; JitterMs adds a random delay up to it
	// (seeded); LatencyFactor delays by the recorded latency times this.
	DelayMs       float64 `json:"delayMs,omitempty"`
	JitterMs      float64 `json:"jitterMs,omitempty"`
	LatencyFactor float64 `json:"latencyFactor,omitempty"`
	// NoAnswer sends nothing in answer (the request hangs).
	NoAnswer bool `json:"noAnswer,omitempty"`
	// Close closes the connection instead of answering (on HTTP, the
	// response is aborted; on stdio the session ends).
	Close bool `json:"close,omitempty"`
	// Exit, on stdio, ends the replay server with this exit status, as a
	// crashing server would.
	Exit *int `json:"exit,omitempty"`
	// Malformed replaces the answer with a broken line: "line" sends a line
	// that is not JSON, "truncated" the first half of the answer.
	Malformed string `json:"malformed,omitempty"`
	// HTTPStatus answers the HTTP request with this status (HTTP only),
	// with HTTPHeaders (e.g. Retry-After, WWW-Authenticate) and HTTPBody.
	HTTPStatus  int               `json:"httpStatus,omitempty"`
	HTTPHeaders map[string]string `json:"httpHeaders,omitempty"`
	HTTPBody    string            `json:"httpBody,omitempty"`
	// CutAfterEvents ends an SSE answer (or, on stdio, the session) after
	// this many messages of the answer were sent.
	CutAfterEvents int `json:"cutAfterEvents,omitempty"`
	// TrickleBytesPerSec sends the answer slowly, this many bytes a second.
	TrickleBytesPerSec int `json:"trickleBytesPerSec,omitempty"`
	// Notify sends these server notifications after the answer (methods
	// such as "notifications/tools/list_changed"), as a server whose lists
	// changed does; their params are empty. On HTTP they go on the
	// session's GET stream, or the subscriptions/listen streams of
	// 2026-07-28.
	Notify []string `json:"notify,omitempty"`
}

// Delay returns the fixed part of the fault's delay.
func (f *Fault) Delay() time.Duration {
	return time.Duration(f.DelayMs * float64(time.Millisecond))
}

func (w *When) validate() error {
	switch {
	case w.Nth < 0, w.Every < 0, w.From < 0, w.To < 0:
		return errors.New(`"when": call numbers must not be negative`)
	case w.To != 0 && w.To < w.From:
		return fmt.Errorf(`"when": "to" (%d) is before "from" (%d)`, w.To, w.From)
	case w.Probability < 0 || w.Probability > 1:
		return fmt.Errorf(`"when": "probability" must be between 0 and 1, not %v`, w.Probability)
	case w.RateLimit != nil && (w.RateLimit.Calls < 0 || w.RateLimit.WindowMs <= 0):
		return errors.New(`"when": "rateLimit" needs "calls" >= 0 and "windowMs" > 0`)
	}
	return nil
}

func (f *Fault) validate() error {
	switch {
	case f.Malformed != "" && f.Malformed != "line" && f.Malformed != "truncated":
		return fmt.Errorf(`"fault": "malformed" must be "line" or "truncated", not %q`, f.Malformed)
	case f.HTTPStatus != 0 && (f.HTTPStatus < 100 || f.HTTPStatus > 599):
		return fmt.Errorf(`"fault": "httpStatus" %d is not an HTTP status`, f.HTTPStatus)
	case f.DelayMs < 0 || f.JitterMs < 0 || f.LatencyFactor < 0 || f.CutAfterEvents < 0 || f.TrickleBytesPerSec < 0:
		return errors.New(`"fault": values must not be negative`)
	}
	for _, m := range f.Notify {
		if !strings.HasPrefix(m, "notifications/") {
			return fmt.Errorf(`"fault": "notify" takes notification methods ("notifications/..."), not %q`, m)
		}
	}
	return nil
}

// Scripted reports whether the interaction is scripted (has "when" or
// "fault"): it is tried before the recording and never answers as a plain
// recorded interaction.
func (in *Interaction) Scripted() bool { return in.When != nil || in.Fault != nil }

// normalize fills in what a person may leave out of a hand-written
// interaction: "from" (client for a request, server for a response), and
// "jsonrpc" and "id" of a request and its response.
func (in *Interaction) normalize() {
	if in.Request != nil {
		if in.From == "" {
			in.From = FromClient
		}
		in.Request = fillEnvelope(in.Request, true)
	}
	if in.Notification != nil {
		in.Notification = fillEnvelope(in.Notification, false)
	}
	if in.Response != nil {
		if in.Response.From == "" {
			in.Response.From = FromServer
			if in.From == FromServer {
				in.Response.From = FromClient
			}
		}
		if in.Response.Message != nil {
			in.Response.Message = fillEnvelope(in.Response.Message, true)
		}
	}
	for i := range in.Exchange {
		if in.Exchange[i].From == "" {
			in.Exchange[i].From = FromServer
		}
		if m := in.Exchange[i].Message; m != nil {
			in.Exchange[i].Message = fillEnvelope(m, false)
		}
	}
}

// fillEnvelope adds "jsonrpc":"2.0" and, when withID, "id":0 to an object
// that lacks them.
func fillEnvelope(raw json.RawMessage, withID bool) json.RawMessage {
	if v, err := jsonrpc.Member(raw, "jsonrpc"); err != nil || v != nil {
		if err != nil {
			return raw
		}
	} else if out, err := jsonrpc.SetMember(raw, json.RawMessage(`"2.0"`), "jsonrpc"); err == nil {
		raw = out
	}
	if !withID {
		return raw
	}
	if v, err := jsonrpc.Member(raw, "id"); err == nil && v == nil {
		if _, merr := jsonrpc.Member(raw, "method"); merr == nil {
			if out, err := jsonrpc.SetMember(raw, json.RawMessage(`0`), "id"); err == nil {
				raw = out
			}
		}
	}
	return raw
}
