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
// to a real go-sdk server (500 and 5,000; 10,000 and 100,000 with
// -soak), saving the cassette as it goes. The tap keeps only its latest
// interactions in memory (the others are in the spill file), so its heap
// after a save and a full GC does not grow with the calls: the test bounds
// the growth at 200 bytes a call, a fraction of the ~600 bytes each call
// adds to the cassette.
func TestSoakStdioTap(t *testing.T) {
	n := 500
	if testing.Short() {
		n = 200
	}
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
	// Measured after a save, which takes what can no longer change out of
	// memory (the saver does so at least every second).
	settle := func() uint64 {
		rec.Sync()
		if err := rec.save(false); err != nil {
			t.Fatal(err)
		}
		return heapAfterGC()
	}
	run(n)
	h1 := settle()
	run(9 * n)
	h10 := settle()
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
	perCall := (int64(h10) - int64(h1)) / int64(9*n)
	filePerCall := fi.Size() / int64(10*n)
	t.Logf("stdio tap: heap %d KiB after %d calls, %d KiB after %d calls: %+d bytes per call; the cassette holds %d bytes per call", h1>>10, n, h10>>10, 10*n, perCall, filePerCall)
	if perCall > 200 {
		t.Errorf("the heap grows by %d bytes per call (more than 200) while each call adds %d bytes to the cassette file", perCall, filePerCall)
	}
}
