package replayer

import (
	"encoding/json"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// logLevels are the syslog severities of MCP logging, lowest first.
var logLevels = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// setLevel handles logging/setLevel: the session keeps the level, and
// replayed notifications/message below it are dropped. When the cassette
// holds no logging/setLevel but the recorded server declared logging, the
// answer is {} as the server's would be; otherwise the recording answers.
func (s *Session) setLevel(msg *jsonrpc.Message) *Plan {
	var p struct {
		Level string `json:"level"`
	}
	json.Unmarshal(msg.Params, &p)
	n, ok := logLevels[p.Level]
	if !ok {
		return &Plan{Steps: []Step{{Kind: StepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
			Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: unknown logging level " + string(mustJSON(p.Level))})}}}
	}
	s.mu.Lock()
	s.level = n
	s.mu.Unlock()
	if len(s.e.byMethod["logging/setLevel"]) == 0 && s.e.caps.logging {
		s.e.stats.matched.Add(1)
		return &Plan{Steps: []Step{{Kind: StepSend, Response: true, Message: jsonrpc.Response(msg.ID, json.RawMessage("{}"))}}}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// keepLog reports whether a server notification passes the session's
// logging level (every message but a notifications/message below it).
func (s *Session) keepLog(m *jsonrpc.Message) bool {
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
