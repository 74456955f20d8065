package replayer

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// logLevels are the syslog severities of MCP logging, lowest first.
var logLevels = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// setLevel handles logging/setLevel: the session keeps the level, and
// replayed notifications/message below it are dropped. When the cassette
// holds no logging/setLevel but the recorded server declared logging, the
// answer is {} as the server's would be; otherwise the recording answers.
func (s *session) setLevel(msg *jsonrpc.Message) *answerPlan {
	var p struct {
		Level string `json:"level"`
	}
	json.Unmarshal(msg.Params, &p)
	n, ok := logLevels[p.Level]
	if !ok {
		return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
			Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: unknown logging level " + string(mustJSON(p.Level))})}}}
	}
	if !s.noSession { // protocol_sessionless.go
		s.mu.Lock()
		s.level = n
		s.mu.Unlock()
	}
	if len(s.e.byMethod["logging/setLevel"]) == 0 && s.e.caps.logging {
		s.e.stats.matched.Add(1)
		return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.Response(msg.ID, json.RawMessage("{}"))}}}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// keepLog reports whether a server notification passes the session's
// logging level (every message but a notifications/message below it).
func (s *session) keepLog(m *jsonrpc.Message) bool {
	if m.Method != "notifications/message" {
		return true
	}
	s.mu.Lock()
	level := s.level
	s.mu.Unlock()
	if level <= 0 {
		return true
	}
	var p struct {
		Level string `json:"level"`
	}
	json.Unmarshal(m.Params, &p)
	n, ok := logLevels[p.Level]
	return !ok || n >= level
}

// requestLogLevel returns the logging level a 2026-07-28 request asks for
// with raw, its _meta logLevel (nil for none): set reports whether the key
// is there, ok whether its value is a level.
func requestLogLevel(raw json.RawMessage) (level int, set, ok bool) {
	if raw == nil {
		return 0, false, true
	}
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return 0, true, false
	}
	level, ok = logLevels[name]
	return level, true, ok
}

// badLogLevel answers a 2026-07-28 request whose _meta logLevel is no
// logging level with -32602, as the logging spec of that version says a
// server should. version is the protocol version msg's _meta names.
func (s *session) badLogLevel(msg *jsonrpc.Message, version string) *answerPlan {
	if !mcp.Stateless(version) {
		return nil
	}
	raw := s.paramsOf(msg.Params).LogLevel
	if _, set, ok := requestLogLevel(raw); !set || ok {
		return nil
	}
	return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
		Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: unknown logging level " + string(raw) + " in _meta " + mcp.MetaLogLevel})}}}
}

// perRequestLogs applies the per-request logging level of a 2026-07-28
// request to its plan: notifications/message is request-scoped in that
// era, sent only when the request's _meta names a level, and only at or
// above it. (The stateful era's logging/setLevel level is applied by
// keepLog as the plan is made.) version is the protocol version msg's
// _meta names.
func (s *session) perRequestLogs(msg *jsonrpc.Message, version string, plan *answerPlan) *answerPlan {
	if plan == nil || !mcp.Stateless(version) {
		return plan
	}
	level, set, _ := requestLogLevel(s.paramsOf(msg.Params).LogLevel)
	drop := func(st step) bool {
		if st.Kind != stepSend || st.Response || !bytes.Contains(st.Message, []byte(`"notifications/message"`)) {
			return false
		}
		m, err := jsonrpc.Parse(st.Message)
		if err != nil || m.Method != "notifications/message" {
			return false
		}
		if !set {
			return true
		}
		var p struct {
			Level string `json:"level"`
		}
		json.Unmarshal(m.Params, &p)
		n, known := logLevels[p.Level]
		return known && n < level
	}
	if !slices.ContainsFunc(plan.Steps, drop) {
		return plan
	}
	out := *plan
	out.Steps = slices.DeleteFunc(slices.Clone(plan.Steps), drop)
	return &out
}
