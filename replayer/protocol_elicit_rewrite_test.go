package replayer

import "testing"

// recordedIDs puts the live elicitationId wherever a message names the
// recorded one: whole strings always, inside text when the id is long
// enough not to be part of unrelated text; member names never.
func TestRecordedIDs(t *testing.T) {
	ids := map[string]string{"rec-elicitation-1": "live-A", "7": "live-B", "same-id-00": "same-id-00"}
	for _, c := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"signed in <rec-elicitation-1>"}],"structuredContent":{"elicitationId":"rec-elicitation-1","n":1.50}}}`,
			`{"id":3,"jsonrpc":"2.0","result":{"content":[{"text":"signed in <live-A>","type":"text"}],"structuredContent":{"elicitationId":"live-A","n":1.50}}}`},
		{`{"jsonrpc":"2.0","id":3,"result":{"a":"7","b":"page 7 of 9"}}`, `{"id":3,"jsonrpc":"2.0","result":{"a":"live-B","b":"page 7 of 9"}}`},
		{`{"jsonrpc":"2.0","id":7,"result":{"rec-elicitation-1":true}}`, `{"jsonrpc":"2.0","id":7,"result":{"rec-elicitation-1":true}}`},
		{`{"jsonrpc":"2.0", "id":3,"result":{"text":"same-id-00"}}`, `{"jsonrpc":"2.0", "id":3,"result":{"text":"same-id-00"}}`},
		{`{"jsonrpc":"2.0", "id":3,"result":{"text":"nothing to see"}}`, `{"jsonrpc":"2.0", "id":3,"result":{"text":"nothing to see"}}`},
	} {
		if got := string(recordedIDs([]byte(c.in), ids)); got != c.want {
			t.Errorf("recordedIDs(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
