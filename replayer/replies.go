package replayer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// ReplyMismatch describes a client's reply to a replayed server-to-client
// request (sampling/createMessage, roots/list, elicitation/create...) that
// differs from the reply recorded for it, or that never came.
type ReplyMismatch struct {
	// Method is the server-to-client request's method.
	Method string
	// Interaction is the 1-based cassette position of the interaction
	// whose exchange holds the request (0 for a scripted one).
	Interaction int
	// Recorded and Live are the two replies' result (or error) objects;
	// Live is nil when no reply came. Like the differences and the diff,
	// they are redacted by the default rules (shown.go): a password that
	// a user typed into an elicitation form is not shown.
	Recorded, Live json.RawMessage
	// Differences say where they differ; Diff is the -recorded +live diff.
	Differences []string
	Diff        string
}

func (m *ReplyMismatch) String() string {
	if m.Live == nil {
		return fmt.Sprintf("mcpmock: no reply from the client to the replayed %s", m.Method)
	}
	return fmt.Sprintf("mcpmock: the client's reply to the replayed %s differs from the recording: %s", m.Method, strings.Join(m.Differences, "; "))
}

// replyBody is what a reply's comparison looks at: its result, or its
// error object.
func replyBody(m *jsonrpc.Message) json.RawMessage {
	if m == nil {
		return nil
	}
	if m.Error != nil {
		b, _ := json.Marshal(map[string]any{"error": m.Error})
		return b
	}
	return m.Result
}

// checkReply compares the client's reply to a replayed server-to-client
// request with the recorded reply, using the engine's matcher under the
// cassette's configuration. A difference is logged and reported to
// Options.OnReplyMismatch; with Options.Strict, the returned message (not
// nil) is the error that answers the original request instead.
func (s *session) checkReply(plan *answerPlan, st step, reply *jsonrpc.Message) []byte {
	s.noteElicitReply(st, reply) // protocol_elicit.go
	if st.expect == nil {
		return nil
	}
	rec, err := jsonrpc.Parse(st.expect)
	if err != nil {
		return nil
	}
	mm := &ReplyMismatch{Method: st.method, Interaction: plan.Interaction, Recorded: replyBody(rec), Live: s.taskBack(replyBody(reply))}
	if st.interaction > 0 {
		mm.Interaction = st.interaction // a follow-up (cause.go)
	}
	if reply != nil {
		rec, live := matcher.Request{Method: st.method, Params: mm.Recorded}, matcher.Request{Method: st.method, Params: mm.Live}
		res := s.e.replyMatcher.Match(rec, live)
		if res.Match {
			return nil
		}
		sh := shown(s.e.replyMatcher, rec, live, res)
		for _, d := range sh.diffs {
			mm.Differences = append(mm.Differences, d.String())
		}
		mm.Recorded, mm.Live, mm.Diff = sh.rec, sh.live, sh.diff
	} else {
		mm.Recorded, _ = cassettes.DefaultRedactor().RedactJSON(mm.Recorded)
	}
	s.e.opts.Logger.Warn(strings.TrimPrefix(mm.String(), "mcpmock: "))
	if f := s.e.opts.OnReplyMismatch; f != nil {
		f(*mm)
	}
	if !s.e.opts.Strict || st.origID == "" {
		return nil
	}
	data, _ := json.Marshal(map[string]any{"method": mm.Method, "differences": mm.Differences, "recorded": mm.Recorded, "live": mm.Live})
	return jsonrpc.ErrorResponse(st.origID, &jsonrpc.Error{Code: CodeReplyMismatch, Message: mm.String(), Data: data})
}

// CodeReplyMismatch is the JSON-RPC error code that answers a request,
// in strict mode, when the client's reply to a server-to-client request it
// caused differs from the recording.
const CodeReplyMismatch = -32011
