package recorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestGrouping feeds the recorder a session as a tap would see it and checks
// how messages are grouped into interactions.
func TestGrouping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec, err := New(path, &Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Time { return clock.Add(time.Duration(ms) * time.Millisecond) }
	c, s := cassettes.FromClient, cassettes.FromServer
	steps := []struct {
		from cassettes.Direction
		msg  string
	}{
		{c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{s, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`},
		{c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"p"}}}`},
		{c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`},
		{s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`},
		{s, `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`},
		{c, `{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}`},
		{s, `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`},
		{s, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		{s, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{s, `not json at all`},
		{c, `[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`},
		{s, `{"jsonrpc":"2.0","id":99,"result":{}}`},
		{c, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"crash"}}`},
	}
	for i, st := range steps {
		rec.Observe(st.from, []byte(st.msg), at(i))
	}
	got := rec.Cassette()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, in := range got.Interactions {
		k := string(in.From) + ":" + in.Kind()
		if in.Request != nil {
			var m struct {
				Method string `json:"method"`
			}
			json.Unmarshal(in.Request, &m)
			k += ":" + m.Method
			if in.Response != nil {
				k += "+response"
			}
			if len(in.Exchange) > 0 {
				k += "+" + itoa(len(in.Exchange))
			}
		}
		kinds = append(kinds, k)
	}
	want := []string{
		"client:request:initialize+response",
		"client:notification",
		"client:request:tools/call+response+1", // a: its progress, by token
		"client:request:tools/call+response+2", // b, the latest in flight: roots/list and the reply
		"server:notification",                  // list_changed stands alone
		"server:raw",
		"client:request:ping",
		"client:request:ping",
		"server:raw", // a response to nothing
		"client:request:tools/call",
	}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("interactions:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
	if got.Interactions[6].Batch == 0 || got.Interactions[6].Batch != got.Interactions[7].Batch {
		t.Errorf("batch members not numbered alike: %d %d", got.Interactions[6].Batch, got.Interactions[7].Batch)
	}
	if got.Interactions[2].AtMs != 3 {
		t.Errorf("time offset %v, want 3", got.Interactions[2].AtMs)
	}
	loaded, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Interactions) != len(want) {
		t.Errorf("saved %d interactions, want %d", len(loaded.Interactions), len(want))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFlushWhileRecording: a completed interaction reaches the file without
// Close.
func TestFlushWhileRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, &Options{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	now := time.Now()
	rec.Observe(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), now)
	rec.Sync()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file was written before an interaction completed (%v)", err)
	}
	rec.Observe(cassettes.FromServer, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), now)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := cassettes.Load(path)
		switch {
		case errors.Is(err, fs.ErrNotExist): // not written yet
		case err != nil:
			t.Fatalf("a reader saw a broken cassette: %v", err)
		case len(c.Interactions) == 1 && c.Interactions[0].Response != nil:
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the completed interaction was not written within 10s (the flush interval is an hour)")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBigBatchIsSavedBeforeObserveReturns: a large batch of answers
// (saveFirst) is in the file when Observe returns, so that the tap, which
// passes the end of the line on after, keeps the durability promise
// whatever the recording costs. The answers to the batch are observed on
// a recorder that saves every hour otherwise, and on the way the 1,000
// answers before them (a small batch) are not waited for.
func TestBigBatchIsSavedBeforeObserveReturns(t *testing.T) {
	const n = 20_000
	req, resp := pingBatch(n)
	if len(resp) < saveFirstSize {
		t.Fatalf("the batch of answers is %d bytes, under saveFirstSize", len(resp))
	}
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, &Options{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	now := time.Now()
	rec.Observe(cassettes.FromClient, req, now)
	rec.Observe(cassettes.FromServer, resp, now)
	if answered := answeredInFile(t, path); answered != n {
		t.Fatalf("when Observe of the answers returned, the file held %d answered calls, want %d", answered, n)
	}
	if _, small := pingBatch(1_000); rec.saveFirst(&observed{from: cassettes.FromServer, data: small}) {
		t.Error("a batch of 1,000 pings waits for a save")
	}
	if rec.saveFirst(&observed{from: cassettes.FromClient, data: req}) {
		t.Error("the client's batch waits for a save")
	}
}

// answeredInFile is the number of answered calls in the cassette file at
// path, which must load.
func answeredInFile(t *testing.T, path string) int {
	t.Helper()
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatalf("the cassette file: %v", err)
	}
	answered := 0
	for _, in := range c.Interactions {
		if in.Response != nil {
			answered++
		}
	}
	return answered
}

// TestSpilledSavesAreTheSameFile records a session with a recorder that
// spills all but its last few interactions and saves often, and checks its
// file, at every save and at the end, byte for byte against the whole
// cassette held in memory, finished and encoded in one go; and that
// Cassette gives back every interaction. When the spill file cannot be
// written (brokenSpill: opened again read-only, as a full disk would fail
// its writes), the interactions stay in memory and the file is the same.
func TestSpilledSavesAreTheSameFile(t *testing.T) {
	for _, tc := range []struct{ keepTiming, brokenSpill bool }{{false, false}, {true, false}, {false, true}} {
		keepTiming := tc.keepTiming
		t.Run(fmt.Sprintf("keepTiming=%v,brokenSpill=%v", keepTiming, tc.brokenSpill), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.json")
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			opts := &Options{Now: func() time.Time { return clock }, Meta: cassettes.Meta{Server: []string{"srv", "--token", "hunter22"}},
				Save: cassettes.SaveOptions{KeepTiming: keepTiming}}
			spilled, err := newRecorder(path, opts, 3)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := New("", opts)
			if err != nil {
				t.Fatal(err)
			}
			fin, err := cassettes.NewFinisher(&opts.Save)
			if err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				want := whole.Cassette()
				fin.Finish(want)
				wantFile, err := cassettes.Encode(want)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(wantFile), string(got)); diff != "" {
					t.Fatalf("%s: the file differs from the cassette encoded whole (-want +got):\n%s", when, diff)
				}
			}
			c, s := cassettes.FromClient, cassettes.FromServer
			ms := 0
			observe := func(from cassettes.Direction, msg string) {
				ms++
				at := clock.Add(time.Duration(ms) * time.Millisecond)
				spilled.Observe(from, []byte(msg), at)
				whole.Observe(from, []byte(msg), at)
			}
			observe(c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
			observe(s, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"srv","version":"1.2"}}}`)
			observe(c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			// A request that stays open for a while keeps what follows it
			// in memory until it is answered.
			observe(c, `{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow"}}`)
			for i := 1; i <= 120; i++ {
				id := itoa(i)
				observe(c, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":{"note":"Bearer abcdefghijklmnop`+id+`"},"_meta":{"progressToken":`+id+`}}}`)
				observe(s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+id+`,"progress":1}}`)
				if i%7 == 0 {
					observe(s, `{"jsonrpc":"2.0","id":"s`+id+`","method":"roots/list"}`)
					observe(c, `{"jsonrpc":"2.0","id":"s`+id+`","result":{"roots":[]}}`)
				}
				if i%11 == 0 {
					observe(s, `not json `+id)
				}
				observe(s, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"sk-abcdefghijklmnopqrstuvwxyz`+id+`"}]}}`)
				if i == 40 {
					observe(s, `{"jsonrpc":"2.0","id":"long","result":{"content":[]}}`)
				}
				if i%9 == 0 {
					spilled.Sync()
					whole.Sync()
					if err := spilled.save(false); err != nil {
						t.Fatal(err)
					}
					check(fmt.Sprint("after call ", i))
					if tc.brokenSpill && i == 45 {
						spilled.saveMu.Lock()
						ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", spilled.spill.f.Fd()))
						if err != nil {
							t.Fatal(err)
						}
						spilled.spill.f.Close()
						spilled.spill.f = ro
						spilled.saveMu.Unlock()
					}
				}
			}
			if spilled.spill.n == 0 {
				t.Fatal("nothing was spilled")
			}
			if tc.brokenSpill && len(spilled.unspilled) == 0 {
				t.Fatal("the broken spill file took every interaction")
			}
			if err := spilled.Close(); err != nil {
				t.Fatal(err)
			}
			whole.Close()
			check("at the end")
			got, want := spilled.Cassette(), whole.Cassette()
			fin.Finish(got)
			fin.Finish(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Cassette (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnencodableInteractionLosesNoOther: an interaction that cannot be
// encoded (here a message cut short, which the builder never lets in) is
// left out of the file and the save reports it, but the interactions
// spilled with it, and those after it, are written.
func TestUnencodableInteractionLosesNoOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := newRecorder(path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	ping := func(id int, req string) cassettes.Interaction {
		return cassettes.Interaction{From: cassettes.FromClient, Request: json.RawMessage(req),
			Response: &cassettes.Message{From: cassettes.FromServer, Message: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, id))}}
	}
	gone := []cassettes.Interaction{
		ping(1, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		ping(2, `{"jsonrpc":"2.0","id":2,"method":"ping"`), // cut short
		ping(3, `{"jsonrpc":"2.0","id":3,"method":"ping"}`),
	}
	live := liveSet{base: 3, n: 1, idx: []int{3}, ins: []cassettes.Interaction{ping(4, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)}}
	rec.saveMu.Lock()
	err = rec.write(false, cassettes.New(), 0, gone, live, nil)
	rec.saveMu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "interaction 2") {
		t.Fatalf("the save reported %v, want the error of interaction 2", err)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range c.Interactions {
		var m struct{ ID json.RawMessage }
		json.Unmarshal(in.Request, &m)
		ids = append(ids, string(m.ID))
	}
	if diff := cmp.Diff([]string{"1", "3", "4"}, ids); diff != "" {
		t.Errorf("request ids in the file (-want +got):\n%s", diff)
	}
}

// TestSavesFollowChanges: an interaction still in memory that a save
// wrote and that changes after (a request in flight gets its progress, a
// request of the server's and the reply, a line that is no message, then
// its response) is written as it is now by the next save: the file after
// every message is the cassette held in memory, encoded whole.
func TestSavesFollowChanges(t *testing.T) {
	for _, keep := range []int{2, 1000} {
		t.Run(fmt.Sprint("keep=", keep), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.json")
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			opts := &Options{Now: func() time.Time { return clock }, FlushInterval: time.Hour}
			rec, err := newRecorder(path, opts, keep)
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			whole, err := New("", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer whole.Close()
			fin, err := cassettes.NewFinisher(&opts.Save)
			if err != nil {
				t.Fatal(err)
			}
			c, s := cassettes.FromClient, cassettes.FromServer
			steps := []struct {
				from cassettes.Direction
				msg  string
			}{
				{c, `{"jsonrpc":"2.0","id":0,"method":"ping"}`},
				{s, `{"jsonrpc":"2.0","id":0,"result":{}}`},
				{c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}`},
				{c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slower"}}`},
				{s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`},
				{s, `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`},
				{c, `{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}`},
				{s, `not json`},
				{s, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`},
				{s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}`},
				{s, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
				{c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`},
				{s, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
				{c, `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
				{s, `{"jsonrpc":"2.0","id":3,"result":{}}`},
			}
			for k, st := range steps {
				at := clock.Add(time.Duration(k) * time.Millisecond)
				rec.Observe(st.from, []byte(st.msg), at)
				whole.Observe(st.from, []byte(st.msg), at)
				rec.Sync()
				whole.Sync()
				if err := rec.save(false); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if errors.Is(err, fs.ErrNotExist) && k == 0 {
					continue // nothing completed yet
				}
				if err != nil {
					t.Fatal(err)
				}
				want := whole.Cassette()
				fin.Finish(want)
				wantFile, err := cassettes.Encode(want)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(wantFile), string(got)); diff != "" {
					t.Fatalf("after %s: the file differs from the cassette encoded whole (-want +got):\n%s", st.msg, diff)
				}
			}
		})
	}
}

// TestEarlyEncodingFollowsChanges: the early encoder encodes an
// interaction as soon as it completes; a save uses that encoding only while the
// interaction is unchanged, and forgets it once the interaction is spilled.
func TestEarlyEncodingFollowsChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := newRecorder(path, &Options{FlushInterval: time.Hour}, 1000) // nothing spilled yet
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	now := time.Now()
	rec.Observe(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), now)
	rec.Observe(cassettes.FromServer, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), now)
	rec.Sync()
	rec.early.wait()
	rec.saveMu.Lock() // no save in between
	rec.mu.Lock()
	rec.early.mu.Lock()
	p, ok := rec.early.parts[0]
	rec.early.mu.Unlock()
	if !ok || !strings.Contains(string(p.data), `"method": "ping"`) {
		rec.mu.Unlock()
		rec.saveMu.Unlock()
		t.Fatalf("no early encoding of the completed interaction: %q", p.data)
	}
	// The interaction changes after it was encoded.
	rec.state.c.Interactions[0].Response = &cassettes.Message{From: cassettes.FromServer,
		Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"changed":true}}`)}
	rec.mu.Unlock()
	rec.keep = 0 // the next save spills everything
	rec.saveMu.Unlock()
	if err := rec.save(false); err != nil {
		t.Fatal(err)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != 1 || !strings.Contains(string(c.Interactions[0].Response.Message), "changed") {
		t.Fatalf("the file holds the encoding from before the change: %+v", c.Interactions)
	}
	left := rec.early.len()
	if left != 0 {
		t.Errorf("%d early encodings kept after their interactions were spilled", left)
	}
}

// The pause after a save grows with what the save took, never below the
// least interval, and keeps an interaction completed just after a save
// began within the flush interval: pause + 2 × cost + margin ≤ flush.
func TestSavePauseKeepsThePromise(t *testing.T) {
	flush := time.Second
	for _, c := range []struct{ cost, want time.Duration }{
		{time.Millisecond, busySaveInterval},
		{10 * time.Millisecond, busySaveInterval},
		{20 * time.Millisecond, 800 * time.Millisecond},
		{50 * time.Millisecond, 800 * time.Millisecond},  // bounded by the promise
		{100 * time.Millisecond, 700 * time.Millisecond}, // bounded by the promise
		{400 * time.Millisecond, minSaveInterval},        // too slow to keep it
	} {
		if got := savePause(c.cost, flush); got != c.want {
			t.Errorf("savePause(%v) = %v, want %v", c.cost, got, c.want)
		}
	}
	// A long flush interval does not hold completed interactions back
	// for long: the pause stays the busy one.
	if got := savePause(time.Millisecond, time.Hour); got != busySaveInterval {
		t.Errorf("savePause(1ms, 1h) = %v, want %v", got, busySaveInterval)
	}
	for cost := time.Duration(0); cost <= 300*time.Millisecond; cost += time.Millisecond {
		p := savePause(cost, flush)
		if p < minSaveInterval {
			t.Fatalf("savePause(%v) = %v, below %v", cost, p, minSaveInterval)
		}
		if cost <= (flush-minSaveInterval-saveMargin)/2 && p+2*cost+saveMargin > flush {
			t.Fatalf("savePause(%v) = %v: an interaction could wait %v", cost, p, p+2*cost)
		}
	}
}
