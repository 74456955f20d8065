package jsonrpc

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// splitByDecoder is what SplitBatch returned when encoding/json split the
// batch: the reference its own splitter is checked against.
func splitByDecoder(data []byte) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	err := json.Unmarshal(data, &elems)
	return elems, err
}

func checkSplit(t *testing.T, data []byte) {
	t.Helper()
	trimmed := strings.TrimSpace(string(data))
	if !strings.HasPrefix(trimmed, "[") {
		return
	}
	got, batch, err := SplitBatch(data)
	want, werr := splitByDecoder([]byte(trimmed))
	if !batch {
		t.Fatalf("SplitBatch(%q): not a batch", data)
	}
	if (err == nil) != (werr == nil) {
		t.Fatalf("SplitBatch(%q): error %v, encoding/json says %v", data, err, werr)
	}
	if err != nil {
		return
	}
	if want == nil {
		want = []json.RawMessage{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("SplitBatch(%q) (-encoding/json +got):\n%s", data, diff)
	}
}

func TestSplitBatchAgreesWithTheDecoder(t *testing.T) {
	for _, s := range []string{
		`[]`, ` [ ] `, `[{"a":1}]`, `[{"a":1},{"b":[1,2]}]`, "[ {\"a\":1} ,\n {\"b\":2} ]\n",
		`[1,"x",null,true,[]]`, `[`, `[,]`, `[{"a":1},]`, `[{"a":1}{"b":2}]`, `[{"a":1}] x`, `[{"a":"\u00e9"}]`,
		`[{"a":1}`, `[{"a":}]`, `[]]`, `[[[[]]]]`,
	} {
		checkSplit(t, []byte(s))
	}
}

// TestSplitBatchAllocatesOnce: a batch's elements share one copy of it, so
// that a batch of 100,000 requests is not 100,000 objects for the collector.
func TestSplitBatchAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates; .ci/run runs this without it")
	}
	elems := make([]string, 1000)
	for i := range elems {
		elems[i] = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	}
	data := []byte("[" + strings.Join(elems, ",") + "]")
	allocs := testing.AllocsPerRun(10, func() {
		if got, _, err := SplitBatch(data); err != nil || len(got) != 1000 {
			t.Fatal(len(got), err)
		}
	})
	if allocs > 3 {
		t.Errorf("SplitBatch of 1,000 elements: %.0f allocations, want at most 3", allocs)
	}
	runtime.KeepAlive(data)
}

func FuzzSplitBatch(f *testing.F) {
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[1,]`))
	f.Fuzz(func(t *testing.T, data []byte) { checkSplit(t, data) })
}
