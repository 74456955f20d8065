package cassettes

// drift.go: how a live server's answers differ from a recorded cassette
// (mcpmock cassette verify): Diff of the recording and of the same requests
// answered live.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Live is a live MCP server as Drift talks to it; replayer.Upstream is one.
type Live interface {
	// Call sends one request and returns the interaction it made (its
	// Response is what Drift compares), or an error when the server could
	// not be asked or gave no answer.
	Call(ctx context.Context, request []byte) (*Interaction, error)
	// Notify sends one notification.
	Notify(ctx context.Context, notification []byte) error
}

// Drift sends the client's requests and notifications of c to live, one at
// a time in recorded order (scripted interactions left out), and returns how
// the live answers differ from the recorded ones: Diff of c and of a
// cassette holding the same requests with the live answers, so that the
// drift check and cassette diff say a change alike. A request whose Call
// fails is a breaking change of KindCallFailed, not a missing interaction;
// calls that fail with the same error (a server that refuses the recorded
// protocol version answers every request with the same HTTP 400) are one
// change naming them all. The error is a notification that could not be
// sent, or ctx's.
func Drift(ctx context.Context, c *Cassette, live Live) (Changes, error) {
	// now is c with the live answers: the same interactions, so that a
	// change names an interaction by the number it has in c.
	now := &Cassette{Version: Version, Meta: c.Meta, Interactions: slices.Clone(c.Interactions)}
	var failures []*failure
	byError := map[string]*failure{}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.From != FromClient || in.Scripted() {
			continue
		}
		if in.Notification != nil {
			if err := live.Notify(ctx, in.Notification); err != nil {
				return nil, err
			}
			continue
		}
		if in.Request == nil {
			continue
		}
		got, err := live.Call(ctx, in.Request)
		if err == nil {
			now.Interactions[i].Response = got.Response
			continue
		}
		now.Interactions[i].Request = nil
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r, _ := requestOf(i+1, in)
		method := r.method
		key := strings.Replace(err.Error(), " "+method+": ", " ", 1)
		f := byError[key]
		if f == nil {
			f = &failure{err: err, key: key, label: r.label, tool: r.tool}
			byError[key] = f
			failures = append(failures, f)
		}
		f.interactions = append(f.interactions, i+1)
		if !slices.Contains(f.methods, method) {
			f.methods = append(f.methods, method)
		}
	}
	failed := map[int]bool{}
	var out Changes
	for _, f := range failures {
		for _, n := range f.interactions {
			failed[n] = true
		}
		out = append(out, f.change())
	}
	for _, ch := range Diff(c, now) {
		if ch.Kind == KindMissing && failed[ch.Interaction] {
			continue
		}
		out = append(out, ch)
	}
	return out, nil
}

// failure is the calls of Drift that failed with one error: the
// interactions (1-based) and their methods.
type failure struct {
	err          error
	key          string // the error without the method it names
	label, tool  string // the first request's
	interactions []int
	methods      []string
}

func (f *failure) change() Change {
	c := Change{Breaking: true, Kind: KindCallFailed, Interaction: f.interactions[0], Method: f.methods[0]}
	if len(f.interactions) == 1 {
		c.Tool, c.Request = f.tool, f.label
		c.Text = fmt.Sprintf("interaction %d: %s: %v", f.interactions[0], f.label, f.err)
	} else {
		c.Text = fmt.Sprintf("interactions %s (%s): now fail alike: %s", joinInts(f.interactions), strings.Join(f.methods, ", "), f.key)
	}
	return c
}

// joinInts writes 2, 4 and 6.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// result is the result of a response message; nil for none.
func result(m *Message) json.RawMessage {
	if m == nil || m.Message == nil {
		return nil
	}
	msg, err := jsonrpc.Parse(m.Message)
	if err != nil {
		return nil
	}
	return msg.Result
}

// stripVolatile drops the _meta of a result: it carries no meaning for a
// comparison.
func stripVolatile(raw json.RawMessage) json.RawMessage {
	out, err := jsonrpc.DeleteMember(raw, "_meta")
	if err != nil {
		return raw
	}
	return out
}

// jsonEqual compares two JSON texts as values (bytes when one does not
// parse).
func jsonEqual(a, b json.RawMessage) bool {
	x, okA := decodeJSON(a)
	y, okB := decodeJSON(b)
	if !okA || !okB {
		return bytes.Equal(a, b)
	}
	return jsonEqualValues(x, y)
}
