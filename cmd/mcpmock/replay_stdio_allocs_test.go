package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestReplayStdioCallAllocates counts what the process allocates a call
// while a client that allocates nothing a call (its requests written
// before, its answers read in place) calls `mcpmock replay` over stdio, as
// the command runs it (its memory limit's reader, the engine's front end,
// the live log on and off): nothing. The request's id was the last
// allocation, a string of its own; it is a view of the line now, and a
// miss copies the id it keeps (replayer's TestMissesKeepNotTheirLines).
func TestReplayStdioCallAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	path := filepath.Join(t.TempDir(), "echo.json")
	if err := cassettes.Save(path, echoCassette(false)); err != nil {
		t.Fatal(err)
	}
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			args := []string{"replay", "-c", path}
			if quiet {
				args = append(args, "--quiet")
			}
			// Pipes of the system's, as a client spawns the replay with:
			// its answers are written straight from the reader (stdio.Out).
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inR.Close()
			defer outR.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr bytes.Buffer
			stderr.Grow(4 << 20) // the log's lines, without growing it in the count
			done := make(chan error, 1)
			go func() { done <- run(ctx, args, inR, outW, &stderr); outW.Close() }()
			answers := bufio.NewReaderSize(outR, 64<<10)
			call := func(req []byte) []byte {
				if _, err := inW.Write(req); err != nil {
					t.Fatal(err)
				}
				line, err := answers.ReadSlice('\n')
				if err != nil {
					t.Fatal(err)
				}
				return line
			}
			call([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"))
			inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
			const calls = 2000
			reqs := make([][]byte, calls)
			for i := range reqs {
				reqs[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`+"\n", i+1, i%64)
			}
			perCall, bytesPerCall := allocsPerCall(reqs, func(r []byte) { call(r) })
			last := call([]byte(`{"jsonrpc":"2.0","id":9999,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m5"}}}` + "\n"))
			if !bytes.Contains(last, []byte(`"text":"m5"`)) || !bytes.Contains(last, []byte(`"id":9999`)) {
				t.Fatalf("the last answer is %s, want m5's under id 9999", last)
			}
			inW.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !quiet && !bytes.Contains(stderr.Bytes(), []byte(`tools/call echo {"text":"m5"}`)) {
				t.Errorf("the live log has no line of the calls:\n%.400s", stderr.Bytes())
			}
			t.Logf("%.3f allocations, %.0f bytes a call", perCall, bytesPerCall)
			// A few are the runtime's and the log's own, now and then:
			// beside a busy `go test ./...`, 40 runs read up to 0.021
			// allocations and 75 bytes a call (the log's buffer growing
			// once past its largest batch so far is one allocation of some
			// 74 KB). The request id's string was 1.00 allocation a call;
			// the live log's buffer, dropped after each batch past 64 KiB
			// (this client is faster than one of another process), was
			// 0.03 allocations and 433 bytes a call.
			if perCall >= 0.05 || bytesPerCall > 200 {
				t.Errorf("a replayed call over stdio allocates %.2f times, %.0f bytes; want none", perCall, bytesPerCall)
			}
		})
	}
}
