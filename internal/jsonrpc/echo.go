package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// NoMessage reports whether data, the data of an SSE event or a line a
// server sent, carries no JSON-RPC message at all: it is blank (the empty
// data of a priming event), or it is a JSON object with none of the members
// of a JSON-RPC message ({} is what some servers put in their priming
// events). Such data is a transport's echo, not a message: it is neither
// recorded nor replayed. Text that is not JSON is not covered: it is a
// broken message, kept as raw text.
func NoMessage(data []byte) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return true
	}
	if data[0] != '{' {
		return false
	}
	for _, name := range messageMembers {
		if bytes.Contains(data, name) {
			return false
		}
	}
	return json.Valid(data)
}

// messageMembers are the member names of a JSON-RPC message, quoted.
var messageMembers = [][]byte{[]byte(`"jsonrpc"`), []byte(`"method"`), []byte(`"id"`), []byte(`"result"`), []byte(`"error"`)}
