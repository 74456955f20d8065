package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/hugepage"
)

// A large cassette is replayed from huge pages (internal/hugepage): a call
// reads places scattered over all of it, and with small pages each is also
// a TLB miss. The replay's process then holds a good part of its memory in
// huge pages, where a kernel gives them only when asked ("madvise", the
// usual setting), as this one does.
func TestReplayLargeCassetteInHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("this kernel gives no transparent huge pages (%q, %v)", mode, err)
	}
	path := searchCassette(t, 60000) // miss_test.go
	if fi, err := os.Stat(path); err != nil || fi.Size() < hugepage.MinBytes {
		t.Fatalf("the cassette is %v bytes (%v), want at least hugepage.MinBytes", fi.Size(), err)
	}
	p := start(t, "replay", "--quiet", "-c", path)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"query 59999","limit":10}}}`)
	if got, _ := json.Marshal(p.recv(t)["result"]); !strings.Contains(string(got), "result 59999") {
		t.Fatalf("the call's answer: %s", got)
	}
	rollup, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/smaps_rollup")
	if err != nil {
		t.Skipf("no smaps_rollup to read the replay's huge pages from: %v", err)
	}
	var rss, huge int
	for line := range strings.Lines(string(rollup)) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "Rss:" {
			rss, _ = strconv.Atoi(f[1])
		}
		if len(f) == 3 && f[0] == "AnonHugePages:" {
			huge, _ = strconv.Atoi(f[1])
		}
	}
	if huge*4 < rss {
		t.Errorf("the replay of a %d-interaction cassette holds %d kB of its %d kB in huge pages, want a quarter at least", 60000, huge, rss)
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("replay exited %d: %s", code, p.stderr.String())
	}
}
