package recorder

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

var soak = flag.Bool("soak", false, "run the soak tests in full (100,000 calls)")

func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSoakStdioTap makes N, then 10N sequential calls through the stdio tap
// to a real go-sdk server (10,000 and 100,000 with -soak). The tap keeps the
// cassette it builds in memory, so its heap grows by what each call adds to
// the cassette and by nothing else: the test bounds the growth per call by
// the cassette's size per call.
func TestSoakStdioTap(t *testing.T) {
	n := 200
	if *soak {
		n = 10000
	}
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	argv, env := testpeer.Command(testpeer.GoSDK)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := Stdio(t.Context(), argv, inR, outW, io.Discard, rec, &StdioOptions{Env: env})
		outW.Close()
		done <- err
	}()
	br := bufio.NewReader(outR)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	br.ReadString('\n')
	calls := 0
	run := func(k int) {
		for range k {
			calls++
			if _, err := io.WriteString(inW, echoCall(fmt.Sprint(calls), calls%10)+"\n"); err != nil {
				t.Fatal(err)
			}
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if id, text, err := echoAnswer(line); err != nil || id != fmt.Sprint(calls) || text != fmt.Sprint("t", calls%10) {
				t.Fatalf("call %d: id %s text %q %v", calls, id, text, err)
			}
		}
	}
	run(n)
	rec.Sync()
	h1 := heapAfterGC()
	run(9 * n)
	rec.Sync()
	h10 := heapAfterGC()
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	perCall := int64(h10-h1) / int64(9*n)
	filePerCall := fi.Size() / int64(10*n)
	t.Logf("stdio tap: heap %d KiB after %d calls, %d KiB after %d calls: %+d bytes per call; the cassette holds %d bytes per call", h1>>10, n, h10>>10, 10*n, perCall, filePerCall)
	if perCall > 4*filePerCall {
		t.Errorf("the heap grows by %d bytes per call, more than four times the %d bytes each call adds to the cassette", perCall, filePerCall)
	}
}
