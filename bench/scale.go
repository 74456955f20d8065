package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/rusage"
	"github.com/mcpmock/mcpmock/replayer"
)

// scaleCalls is how many calls the scale group times in each measurement
// (-scale-calls): the first ones after the load, a collection and a
// warm-up round.
var scaleCalls = 200000

// scaleRounds is how many times the scale group measures each size.
const scaleRounds = 5

// The bars of DESIGN.md for a cassette of 100,000 interactions: it loads in
// a second, and a call costs within 1.2 times a call on 10 interactions.
const (
	maxLoadMs       = 1000
	maxPerCallRatio = 1.2
)

// scaleSizes are the cassette sizes of the scale group.
var scaleSizes = []int{10, 1000, 100000}

// scaleResult is what a child process measured of one cassette.
type scaleResult struct {
	Bytes     int64   `json:"bytes"`
	LoadMs    float64 `json:"loadMs"`
	PerCallNs float64 `json:"perCallNs"`
	PeakKiB   int64   `json:"peakKiB"`
	// LoadCPUMs and PerCallCPUNs are the process's CPU time (user and
	// system, all threads: the collector's too) for the same spans: on a
	// machine shared with other work, wall time also counts the waits for
	// a core.
	LoadCPUMs    float64 `json:"loadCpuMs"`
	PerCallCPUNs float64 `json:"perCallCpuNs"`
	// FaultsPerCall are the page faults a call (minor: memory touched for
	// the first time), which the heap's growth into new memory costs.
	FaultsPerCall float64 `json:"faultsPerCall"`
	// WarmupCalls and WarmupMs are the calls before the timed ones, until
	// the collector ran once after the load or a round of calls allocated
	// next to nothing (scaleChildMain), and their wall time.
	WarmupCalls int     `json:"warmupCalls"`
	WarmupMs    float64 `json:"warmupMs"`
}

// maxWarmup bounds the warm-up calls of a scale measurement.
const maxWarmup = 2_000_000

// quietCall is the bytes a call may allocate and still leave the heap
// where it is, for the warm-up: 200,000 such calls grow it by 12 MiB at
// most, and at 16 bytes a call (a replayed call allocates its id) by 3 MiB.
const quietCall = 64

// heapAllocated is the bytes the process has allocated on the heap so far.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// collections is the number of collections the runtime has completed.
func collections() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// minorFaults is the process's count of minor page faults so far.
func minorFaults() int64 {
	u, _ := rusage.Self()
	return u.MinorFaults
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	u, _ := rusage.Self()
	return u.CPU()
}

// syntheticCassette writes a cassette of n tools/call interactions with
// distinct arguments and realistic results.
func syntheticCassette(path string, n int) error {
	c := cassettes.New()
	c.Meta = cassettes.Meta{Note: fmt.Sprintf("synthetic, %d interactions", n)}
	for i := range n {
		id := strconv.Itoa(i + 1)
		req := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city-` + id + `","units":"metric"}}}`
		resp := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"Current weather in city-` + id + `: 21°C, partly cloudy, wind 12 km/h from the north-west"}]}}`
		c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient, AtMs: cassettes.Millis(i),
			Request: json.RawMessage(req), Response: &cassettes.Message{From: cassettes.FromServer, AtMs: cassettes.Millis(i) + 0.5, Message: json.RawMessage(resp)}})
	}
	return cassettes.Save(path, c)
}

// scaleChildMain measures one cassette in a fresh process, so that its peak
// memory is its own.
func scaleChildMain(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	start, startCPU := time.Now(), cpuTime()
	c, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	eng, err := replayer.New(c, nil)
	if err != nil {
		return err
	}
	load, loadCPU := time.Since(start), cpuTime()-startCPU
	n := len(c.Interactions)
	// One session over in-memory pipes: a call is a line written and its
	// answer read, through the engine's own stdio front end.
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- eng.Serve(context.Background(), sr, sw); sw.Close() }()
	answers := bufio.NewScanner(cr)
	answers.Buffer(nil, 1<<20)
	calls := scaleCalls
	lines := make([][]byte, 256)
	for i := range lines {
		k := (i*7919)%n + 1
		lines[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"get_weather","arguments":{"units":"metric","location":"city-` + strconv.Itoa(k) + `"}}}` + "\n")
	}
	call := func(i int) error {
		if _, err := cw.Write(lines[i%len(lines)]); err != nil {
			return err
		}
		if !answers.Scan() {
			return fmt.Errorf("call %d: the replay ended: %v", i, answers.Err())
		}
		if bytes.Contains(answers.Bytes(), []byte(`"error"`)) {
			return fmt.Errorf("call %d missed: %s", i, answers.Bytes())
		}
		return nil
	}
	// The per-call time is the steady state. The collection that the
	// load's garbage owes is done first (it is a cost of the load, not of
	// the calls). Then the session is warmed up with a round of the calls,
	// and on until the collector has run once more: until then the heap
	// grows towards its goal (twice what is live, so twice the cassette's
	// share), and each page it grows into is a page fault, a cost that the
	// cassette's size sets and that is paid once. Timed in the 200,000
	// calls, it made a 100,000-interaction cassette 1.4–1.6 times slower a
	// call than a 10-interaction one on this kind of machine, where a
	// first touch of memory is dear (a VM), and 1.03 over 1,000,000 calls.
	// The warm-up is reported on its own (WarmupCalls, WarmupMs). Calls
	// that allocate next to nothing (less than quietCall bytes each over a
	// round) leave the heap where it is: the collector would not run for
	// millions of calls, and there is no growth to wait for.
	runtime.GC()
	gcs := collections()
	warm := time.Now()
	warmCalls := 0
	for grew := true; warmCalls == 0 || grew && warmCalls < maxWarmup && collections() == gcs; {
		before := heapAllocated()
		for i := range lines {
			if err := call(warmCalls + i); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		warmCalls += len(lines)
		grew = heapAllocated()-before >= uint64(len(lines)*quietCall)
	}
	warmMs := float64(time.Since(warm).Microseconds()) / 1000
	t, tCPU, tFaults := time.Now(), cpuTime(), minorFaults()
	for i := range calls {
		if err := call(i); err != nil {
			return err
		}
	}
	perCall, perCallCPU := time.Since(t)/time.Duration(calls), (cpuTime()-tCPU)/time.Duration(calls)
	faults := float64(minorFaults()-tFaults) / float64(calls)
	cw.Close()
	if err := <-served; err != nil {
		return err
	}
	res := scaleResult{Bytes: fi.Size(), LoadMs: float64(load.Microseconds()) / 1000, PerCallNs: float64(perCall.Nanoseconds()), PeakKiB: peakKiB(),
		LoadCPUMs: float64(loadCPU.Microseconds()) / 1000, PerCallCPUNs: float64(perCallCPU.Nanoseconds()), FaultsPerCall: faults,
		WarmupCalls: warmCalls, WarmupMs: warmMs}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// peakKiB reads the process's peak resident memory (VmHWM) on Linux.
func peakKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// scale runs the scale group: each size in its own process, scaleRounds
// times, interleaved; the table shows medians, and for the per-call
// ratios the median of each round's ratio.
func scale(w io.Writer, dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	paths := map[int]string{}
	for _, n := range scaleSizes {
		p := filepath.Join(dir, fmt.Sprintf("scale-%d.json", n))
		if err := syntheticCassette(p, n); err != nil {
			return err
		}
		paths[n] = p
	}
	child := func(n int, env ...string) (scaleResult, error) {
		var out bytes.Buffer
		cmd := exec.Command(self, "-scale-calls", strconv.Itoa(scaleCalls), "-scale-child", paths[n])
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		cmd.Env = append(os.Environ(), env...)
		var r scaleResult
		if err := cmd.Run(); err != nil {
			return r, fmt.Errorf("scale %d: %w", n, err)
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return r, fmt.Errorf("scale %d: %w", n, err)
		}
		return r, nil
	}
	// limited are runs with GOMEMLIMIT at the bar (2 × file + 30 MiB):
	// with the default GOGC alone, the heap may grow to twice the live
	// heap before a collection, and a replay's live heap is about 1.7
	// times the file.
	results, limited := map[int][]scaleResult{}, map[int][]scaleResult{}
	for range scaleRounds {
		for _, n := range scaleSizes {
			r, err := child(n, "GOMEMLIMIT=")
			if err != nil {
				return err
			}
			results[n] = append(results[n], r)
			if r, err = child(n, fmt.Sprintf("GOMEMLIMIT=%dMiB", (2*r.Bytes>>20)+30)); err != nil {
				return err
			}
			limited[n] = append(limited[n], r)
		}
	}
	med := func(rs map[int][]scaleResult, n int, f func(scaleResult) float64) float64 {
		var xs []float64
		for _, r := range rs[n] {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	// ratio is the median over rounds of a size's per-call figure over the
	// 10-interaction one of the same round.
	ratio := func(n int, f func(scaleResult) float64) float64 {
		var xs []float64
		for i, r := range results[n] {
			xs = append(xs, f(r)/f(results[scaleSizes[0]][i]))
		}
		return median(xs)
	}
	fmt.Fprintf(w, "| cassette | file | load (bar ≤ %d ms) | load, CPU | per-call replay | per call vs 10 (bar ≤ %.1f) | per call vs 10, CPU | page faults a call | warm-up, once: calls until the collector ran (or the calls allocate next to nothing), their time | peak memory | with GOMEMLIMIT at the bar | bar: 2 × file + 30 MiB |\n", maxLoadMs, maxPerCallRatio)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range scaleSizes {
		size := results[n][0].Bytes
		peak := med(results, n, func(r scaleResult) float64 { return float64(r.PeakKiB) }) * 1024
		peakLimited := med(limited, n, func(r scaleResult) float64 { return float64(r.PeakKiB) }) * 1024
		limit := 2*float64(size) + 30*(1<<20)
		perCall := med(results, n, func(r scaleResult) float64 { return r.PerCallNs })
		load := med(results, n, func(r scaleResult) float64 { return r.LoadMs })
		perCallRatio := ratio(n, func(r scaleResult) float64 { return r.PerCallNs })
		fmt.Fprintf(w, "| %d interactions | %.1f MiB | %.0f ms %s | %.0f ms | %.1f µs | %.2f %s | %.2f | %.3f | %.0f calls, %.0f ms | %.1f MiB %s | %.1f MiB %s | %.1f MiB |\n", n, float64(size)/(1<<20),
			load, metText(load <= maxLoadMs), med(results, n, func(r scaleResult) float64 { return r.LoadCPUMs }),
			perCall/1000, perCallRatio, metText(perCallRatio <= maxPerCallRatio), ratio(n, func(r scaleResult) float64 { return r.PerCallCPUNs }), med(results, n, func(r scaleResult) float64 { return r.FaultsPerCall }),
			med(results, n, func(r scaleResult) float64 { return float64(r.WarmupCalls) }), med(results, n, func(r scaleResult) float64 { return r.WarmupMs }), peak/(1<<20), metText(peak <= limit), peakLimited/(1<<20), metText(peakLimited <= limit), limit/(1<<20))
	}
	fmt.Fprintln(w)
	return nil
}

// scaleServed times the same per-call question through the built binary, as
// a client sees it: `mcpmock replay` over stdio with a go-sdk client, a
// cassette holding the recorded session's handshake and first 64 calls
// against the same cassette with distinct calls added up to 100,000
// interactions. The row is calls/s, large / small: ≥ 0.83 is per-call time
// within 1.2×.
func scaleServed(e *env, dir, recorded string, rounds, calls int) (row, error) {
	c, err := cassettes.Load(recorded)
	if err != nil {
		return row{}, err
	}
	seen := 0
	for i, in := range c.Interactions {
		if m, err := jsonrpc.Parse(in.Request); err == nil && m.Method == "tools/call" {
			if seen++; seen == 64 {
				c.Interactions = c.Interactions[:i+1]
				break
			}
		}
	}
	small, large := filepath.Join(dir, "served-small.json"), filepath.Join(dir, "served-100k.json")
	if err := cassettes.Save(small, c); err != nil {
		return row{}, err
	}
	n := len(c.Interactions)
	for i := n; i < 100000; i++ {
		id := strconv.Itoa(100000 + i)
		req := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"other-` + id + `"}}}`
		resp := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"other-` + id + `"}]}}`
		c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient, Request: json.RawMessage(req),
			Response: &cassettes.Message{From: cassettes.FromServer, Message: json.RawMessage(resp)}})
	}
	if err := cassettes.Save(large, c); err != nil {
		return row{}, err
	}
	res, err := interleave(rounds, calls,
		[]string{e.mcpmock, "replay", "--quiet", "-c", small},
		[]string{e.mcpmock, "replay", "--quiet", "-c", large})
	if err != nil {
		return row{}, err
	}
	return compare(fmt.Sprintf("stdio replay, per call: 100,000 interactions / %d", n), res[1], res[0], 1/1.2), nil
}
