package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// reference is encoding/json's view of a message: what Parse, a hand-written
// scanner, must agree with.
type reference struct {
	ok     bool // a valid message by the reference's reading
	kind   Kind
	method string
	id     string // compacted JSON, "" for none
}

// referenceParse reads data with encoding/json. It reports usable=false for
// inputs where readers legitimately differ (duplicate keys).
func referenceParse(data []byte) (ref reference, usable bool) {
	if !json.Valid(data) {
		return reference{}, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return reference{}, true // valid JSON, no object
	}
	if hasDuplicateKeys(data) {
		return reference{}, false
	}
	var version string
	if json.Unmarshal(obj["jsonrpc"], &version) != nil || version != "2.0" {
		return reference{}, true
	}
	idRaw, hasID := obj["id"]
	if hasID {
		idRaw = bytes.TrimSpace(idRaw)
		switch {
		case idRaw[0] == '"', idRaw[0] == '-', idRaw[0] >= '0' && idRaw[0] <= '9':
			var b bytes.Buffer
			json.Compact(&b, idRaw)
			ref.id = b.String()
		case string(idRaw) == "null":
			// null: allowed in some error responses only; readers differ.
			return reference{}, false
		default:
			return reference{}, true // an id of the wrong type
		}
	}
	methodRaw, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case hasMethod:
		if json.Unmarshal(methodRaw, &ref.method) != nil || ref.method == "" || hasResult || hasError {
			return reference{}, false
		}
		if p, ok := obj["params"]; ok && len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return reference{}, false
		}
		ref.kind = KindNotification
		if hasID {
			ref.kind = KindRequest
		}
	case hasResult != hasError && hasID:
		if hasError && !plainError(obj["error"]) {
			return reference{}, false // readers differ on odd error members
		}
		ref.kind = KindResponse
	default:
		return reference{}, false
	}
	ref.ok = true
	return ref, true
}

// plainError reports whether raw is an error object as JSON-RPC writes it:
// an integer code, a string message, maybe data, nothing else.
func plainError(raw json.RawMessage) bool {
	var e map[string]json.RawMessage
	if json.Unmarshal(raw, &e) != nil || hasDuplicateKeys(raw) {
		return false
	}
	var code int
	var msg string
	for k := range e {
		if k != "code" && k != "message" && k != "data" {
			return false
		}
	}
	return json.Unmarshal(e["code"], &code) == nil && json.Unmarshal(e["message"], &msg) == nil
}

// hasDuplicateKeys reports whether the top-level object repeats a key.
func hasDuplicateKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		k := t.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// FuzzParseDifferential checks Parse against encoding/json: on valid JSON
// they agree on whether the message is valid, and on its kind, id and
// method.
func FuzzParseDifferential(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":"a\u0062","result":{"x":[1,2,{"y":"\""}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-32600,"message":"m"}}`,
		`{"method":"m\u00e9","jsonrpc":"2.0","id":7}`,
		` { "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" } `,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`[{"jsonrpc":"2.0","method":"n"}]`,
		`{"\u006asonrpc":"2.0","\u0069d":1,"m\u0065thod":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ref, usable := referenceParse(data)
		if !usable || !json.Valid(data) {
			return
		}
		m, err := Parse(data)
		if ref.ok != (err == nil) {
			t.Fatalf("encoding/json says valid=%v, Parse says %v, for %s", ref.ok, err, data)
		}
		if err != nil {
			return
		}
		if m.Kind() != ref.kind {
			t.Fatalf("kind %v, encoding/json %v, for %s", m.Kind(), ref.kind, data)
		}
		// Invalid UTF-8: encoding/json writes U+FFFD, Parse keeps the bytes
		// (testdata/fuzz/FuzzParseDifferential/c6722d74c4773ed4).
		if utf8.ValidString(m.Method) && m.Method != ref.method {
			t.Fatalf("method %q, encoding/json %q, for %s", m.Method, ref.method, data)
		}
		var b bytes.Buffer
		if m.ID != "" {
			json.Compact(&b, []byte(m.ID))
		}
		if b.String() != ref.id {
			t.Fatalf("id %s, encoding/json %s, for %s", m.ID, ref.id, data)
		}
	})
}
