package replayer

import (
	"encoding/json"
	"net/http"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// This file replays the batches a server of 2025-03-26 sent: server
// messages recorded as one JSON-RPC array (cassettes.Message.Batch,
// Interaction.Batch) that a plan sends one after the other go to a stream
// client as one array line again, and over Streamable HTTP as one event,
// to a session of a version that has batches (before 2025-06-18; from
// then on, one message each).

// batchRun returns how many steps from the first one on are sends of one
// recorded server batch (1 when the first is no batch member).
func batchRun(steps []step) int {
	b := steps[0].Batch
	if b == 0 || steps[0].Kind != stepSend || steps[0].Notify {
		return 1
	}
	n := 1
	for n < len(steps) && steps[n].Kind == stepSend && !steps[n].Notify && steps[n].Batch == b {
		n++
	}
	return n
}

// batchesAllowed reports whether a Streamable HTTP request speaks
// 2025-03-26, whose SSE streams may carry batches (its
// Mcp-Protocol-Version header, which a client of that version may leave
// out; batching is gone from 2025-06-18 on).
func batchesAllowed(r *http.Request) bool {
	return mcp.StreamableBatches(r.Header.Get(mcp.HeaderProtocolVersion))
}

// noteVersion keeps the protocol version that the answer to the session's
// initialize negotiates.
func (s *session) noteVersion(msg *jsonrpc.Message, plan *answerPlan) {
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
func (s *session) batches() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mcp.Batches(s.version)
}
