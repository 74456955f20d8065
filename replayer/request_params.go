package replayer

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// paramsMemo keeps what was read of the last request params a session
// looked at (mcp.ReadParams): the checks of one request read its _meta
// and name several times. It is kept by content, never by where the
// bytes are: a line buffer holds another request once one is answered.
type paramsMemo struct {
	mu  sync.Mutex
	raw []byte            // a copy of the params read
	p   mcp.RequestParams // read from raw
}

// maxMemoParams is the largest params the memo copies; larger ones (a
// miss of a megabyte) are read each time rather than kept.
const maxMemoParams = 16 << 10

// paramsOf is mcp.ReadParams(params), from the memo when the session read
// the same params last.
func (s *session) paramsOf(params json.RawMessage) mcp.RequestParams {
	if len(params) > maxMemoParams {
		return mcp.ReadParams(params)
	}
	m := &s.params
	m.mu.Lock()
	defer m.mu.Unlock()
	if !bytes.Equal(m.raw, params) {
		m.raw = append(m.raw[:0], params...)
		m.p = mcp.ReadParams(m.raw)
	}
	return m.p.Rebase(m.raw, params)
}

// knowParams puts p, read from params by a front end before the session
// handles them, in the memo.
func (s *session) knowParams(params json.RawMessage, p mcp.RequestParams) {
	if len(params) > maxMemoParams {
		return
	}
	m := &s.params
	m.mu.Lock()
	defer m.mu.Unlock()
	m.raw = append(m.raw[:0], params...)
	m.p = p.Rebase(params, m.raw)
}
