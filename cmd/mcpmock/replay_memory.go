package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// limitMemory keeps the replay of a cassette of size bytes within the
// memory the design allows, 2 × its size + 30 MiB. Without a limit the
// collector lets the heap grow to twice what is live before it runs, and a
// long replay of a 70 MiB cassette goes above that (173 MiB against 172
// after 400,000 calls). GOMEMLIMIT, when set, wins. The limit is soft: it
// never fails an allocation, and it is never set below 1.5 × the heap in
// use after the load, so that a cassette that takes more memory than usual
// does not keep the collector running. It returns the limit it set, or 0.
func limitMemory(size int64) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	limit := max(2*size+30<<20, int64(ms.HeapAlloc)*3/2)
	debug.SetMemoryLimit(limit)
	return limit
}
