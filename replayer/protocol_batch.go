package replayer

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// This file replays the batches a server of 2025-03-26 sent: server
// messages recorded as one JSON-RPC array (cassettes.Message.Batch,
// Interaction.Batch) that a plan sends one after the other go to a stream
// client as one array line again, and over Streamable HTTP as one event,
// to a session of a version that has batches (before 2025-06-18; from
// then on, one message each).

// batchRun returns how many steps from the first one on are sends of one
// recorded server batch (1 when the first is no batch member).
func batchRun(steps []Step) int {
	b := steps[0].Batch
	if b == 0 || steps[0].Kind != StepSend || steps[0].Notify {
		return 1
	}
	n := 1
	for n < len(steps) && steps[n].Kind == StepSend && !steps[n].Notify && steps[n].Batch == b {
		n++
	}
	return n
}

// sendBatch sends the steps of one recorded server batch as one line. The
// answer to a request of a client batch goes with the other answers of
// that batch instead (respond collects them).
func (c *conn) sendBatch(steps []Step, start time.Time, respond func([]byte), inBatch bool) {
	log := c.e.opts.Logger
	var line [][]byte
	for _, st := range steps {
		if m, err := jsonrpc.Parse(st.Message); err == nil {
			var lat time.Duration
			if st.Response {
				lat = time.Since(start)
			}
			livelog.Message(log, livelog.ToClient, m, lat, "in a batch, as recorded")
		} else {
			livelog.Raw(log, livelog.ToClient, st.Message, "in a batch, as recorded")
		}
		if st.Response && inBatch {
			respond(st.Message)
			continue
		}
		line = append(line, st.Message)
	}
	switch len(line) {
	case 0:
	case 1:
		c.send(line[0])
	default:
		c.send(jsonrpc.JoinBatch(line))
	}
}

// batchesAllowed reports whether a Streamable HTTP request speaks
// 2025-03-26, whose SSE streams may carry batches (its
// Mcp-Protocol-Version header, which a client of that version may leave
// out; batching is gone from 2025-06-18 on).
func batchesAllowed(r *http.Request) bool {
	v := r.Header.Get(headerProtocolVersion)
	return v == "" || v == "2025-03-26"
}

// joinBatches turns each run of steps that the recorded server sent as one
// batch into one step whose message is that JSON-RPC array, for an HTTP
// front end: one SSE event (on the POST's stream, or the GET stream for
// what follows the response). With withResponse false (a JSON answer, which
// is the response object alone), a run that holds the response is left as
// it is.
func joinBatches(plan *Plan, withResponse bool) *Plan {
	if plan.Trickle > 0 || plan.CutAfter > 0 || !slices.ContainsFunc(plan.Steps, func(st Step) bool { return st.Batch != 0 }) {
		return plan
	}
	out := *plan
	out.Steps = nil
	for i := 0; i < len(plan.Steps); {
		n := batchRun(plan.Steps[i:])
		run := plan.Steps[i : i+n]
		i += n
		response := slices.ContainsFunc(run, func(st Step) bool { return st.Response })
		if n < 2 || response && !withResponse {
			out.Steps = append(out.Steps, run...)
			continue
		}
		msgs := make([][]byte, len(run))
		for k, st := range run {
			msgs[k] = st.Message
		}
		out.Steps = append(out.Steps, Step{Kind: StepSend, Message: jsonrpc.JoinBatch(msgs), Response: response, Batch: run[0].Batch})
	}
	return &out
}

// firstVersionWithoutBatches is the first protocol version without
// JSON-RPC batches.
const firstVersionWithoutBatches = "2025-06-18"

// noteVersion keeps the protocol version that the answer to the session's
// initialize negotiates.
func (s *Session) noteVersion(msg *jsonrpc.Message, plan *Plan) {
	if msg.Method != "initialize" || plan == nil {
		return
	}
	m, err := jsonrpc.Parse(plan.response())
	if err != nil || m.Result == nil {
		return
	}
	raw, err := jsonrpc.Member(m.Result, "protocolVersion")
	var v string
	if err != nil || raw == nil || json.Unmarshal(raw, &v) != nil {
		return
	}
	s.mu.Lock()
	s.version = v
	s.mu.Unlock()
}

// batches reports whether the session may be sent a batch: it negotiated
// a version before 2025-06-18, or none yet (as the recorded server, which
// batched, did).
func (s *Session) batches() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version == "" || s.version < firstVersionWithoutBatches
}
