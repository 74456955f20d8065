package cassettes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/tidwall/gjson"
)

// echo is a server message of a cassette that is a transport's echo, not a
// message: an SSE event recorded again (a server re-sent it on a resumed
// stream, and an older tap recorded it as new), or data that is no JSON-RPC
// message (a priming event's {} or blank data).
type echo struct {
	interaction int // 0-based
	// message is where in the interaction: -1 for its own message (its
	// request, notification or raw line), an index of its Exchange, or
	// len(Exchange) for its Response.
	message int
	// For a repeat: the event id, and the interaction that recorded it
	// first; first is -1 for data that is no message.
	eventID string
	first   int
	// text is the data that is no message.
	text string
	// exact says the repeat is a server message of its own with the same
	// message as one of the first interaction: Load drops it.
	exact bool
}

// echoes finds the transport echoes of c, in file order. Event ids are
// unique in a session; as a recorded session id is redacted, a session is
// taken to start at each initialize request, and a cassette without one
// (stateless) is one session.
func (c *Cassette) echoes() []echo {
	var out []echo
	seen := map[string]int{} // event id -> the interaction that recorded it first
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.Scripted() {
			continue
		}
		if in.From == FromClient && in.Request != nil && bytes.Contains(in.Request, []byte(`"initialize"`)) && gjson.GetBytes(in.Request, "method").String() == "initialize" {
			clear(seen)
		}
		if in.From == FromServer && in.Raw != nil && jsonrpc.NoMessage([]byte(*in.Raw)) {
			out = append(out, echo{interaction: i, message: -1, first: -1, text: *in.Raw})
		}
		for k, m := range in.Exchange {
			if m.From == FromServer && m.Raw != nil && jsonrpc.NoMessage([]byte(*m.Raw)) {
				out = append(out, echo{interaction: i, message: k, first: -1, text: *m.Raw})
			}
		}
		if m := in.Response; m != nil && m.From == FromServer && m.Raw != nil && jsonrpc.NoMessage([]byte(*m.Raw)) {
			out = append(out, echo{interaction: i, message: len(in.Exchange), first: -1, text: *m.Raw})
		}
		if in.HTTP == nil {
			continue
		}
		for _, id := range in.HTTP.EventIDs {
			if id == "" {
				continue
			}
			j, ok := seen[id]
			if !ok {
				seen[id] = i
				continue
			}
			if j == i {
				continue
			}
			exact := len(in.HTTP.EventIDs) == 1 && slicesContainsJSON(serverSent(&c.Interactions[j]), ownServerMessage(in))
			out = append(out, echo{interaction: i, message: -1, eventID: id, first: j, exact: exact})
		}
	}
	return out
}

// ownServerMessage is the message of a server's interaction of its own (a
// request with nothing in its exchange and no answer, a notification, a raw
// line); nil for any other.
func ownServerMessage(in *Interaction) []byte {
	if in.From != FromServer || len(in.Exchange) > 0 || in.Response != nil {
		return nil
	}
	switch {
	case in.Notification != nil:
		return in.Notification
	case in.Request != nil:
		return in.Request
	case in.Raw != nil:
		return []byte(*in.Raw)
	}
	return nil
}

// serverSent lists what the server sent in an interaction, messages and
// raw lines alike.
func serverSent(in *Interaction) [][]byte {
	var out [][]byte
	if own := ownServerMessage(in); own != nil {
		out = append(out, own)
	}
	add := func(m *Message) {
		switch {
		case m.From != FromServer:
		case m.Raw != nil:
			out = append(out, []byte(*m.Raw))
		default:
			out = append(out, m.Message)
		}
	}
	for k := range in.Exchange {
		add(&in.Exchange[k])
	}
	if in.Response != nil {
		add(in.Response)
	}
	return out
}

// slicesContainsJSON reports whether one of list is msg, compared as
// compacted JSON (a raw line holds the event's data as it came).
func slicesContainsJSON(list [][]byte, msg []byte) bool {
	if msg == nil {
		return false
	}
	want := compactJSON(msg)
	for _, m := range list {
		if bytes.Equal(compactJSON(m), want) {
			return true
		}
	}
	return false
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return bytes.TrimSpace(b)
	}
	return buf.Bytes()
}

// where names an echo's place in its interaction, for people.
func (e echo) where(in *Interaction) string {
	switch {
	case e.message < 0:
		return "its message"
	case e.message < len(in.Exchange):
		return "exchange message " + strconv.Itoa(e.message+1)
	}
	return "its response"
}

// dropEchoes removes the exact repeats of SSE events (see echoes) from c,
// and notes in c.Warnings what it removed.
func (c *Cassette) dropEchoes() {
	var drop []int
	for _, e := range c.echoes() {
		if e.exact && (len(drop) == 0 || drop[len(drop)-1] != e.interaction) {
			drop = append(drop, e.interaction)
		}
	}
	if len(drop) == 0 {
		return
	}
	names := make([]string, 0, min(len(drop), 10))
	for _, i := range drop[:min(len(drop), 10)] {
		names = append(names, strconv.Itoa(i+1))
	}
	if len(drop) > 10 {
		names = append(names, "...")
	}
	what := fmt.Sprintf("%d server messages", len(drop))
	if len(drop) == 1 {
		what = "1 server message"
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("dropped %s recorded again with an SSE event id already recorded (interactions %s): a server re-sent them on a resumed stream and the tap that recorded them took them for new; replay does not send them (mcpmock cassette lint lists them)",
		what, strings.Join(names, ", ")))
	kept := c.Interactions[:0]
	for i := range c.Interactions {
		if len(drop) > 0 && drop[0] == i {
			drop = drop[1:]
			continue
		}
		kept = append(kept, c.Interactions[i])
	}
	clear(c.Interactions[len(kept):])
	c.Interactions = kept
}
