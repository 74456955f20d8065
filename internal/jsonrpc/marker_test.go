package jsonrpc

import "testing"

// TestMarker: In is bytes.Contains of the marker, whether the marker has
// a tail looked for first or not.
func TestMarker(t *testing.T) {
	for _, c := range []struct {
		marker, msg string
		want        bool
	}{
		{`"input_required"`, `{"result":{"resultType":"input_required"}}`, true},
		{`"input_required"`, `{"result":{"note":"not_required"}}`, false}, // the tail alone
		{`"input_required"`, `{"result":{"resultType":"complete"}}`, false},
		{`"elicitationId"`, `{"params":{"elicitationId":"e1"}}`, true},
		{`"elicitationId"`, `{"params":{"taskId":"t1"}}`, false},
		{`"mcpmock-`, `{"requestState":"mcpmock-1"}`, true}, // no capital, no underscore
		{`"mcpmock-`, `{"requestState":"other"}`, false},
	} {
		if got := NewMarker(c.marker).In([]byte(c.msg)); got != c.want {
			t.Errorf("NewMarker(%s).In(%s) = %v, want %v", c.marker, c.msg, got, c.want)
		}
	}
}
