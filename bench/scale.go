package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/replayer"
)

// scaleSizes are the cassette sizes of the scale group.
var scaleSizes = []int{10, 1000, 100000}

// scaleResult is what a child process measured of one cassette.
type scaleResult struct {
	Bytes     int64   `json:"bytes"`
	LoadMs    float64 `json:"loadMs"`
	PerCallNs float64 `json:"perCallNs"`
	PeakKiB   int64   `json:"peakKiB"`
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
	start := time.Now()
	c, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	eng, err := replayer.New(c, nil)
	if err != nil {
		return err
	}
	load := time.Since(start)
	n := len(c.Interactions)
	s := eng.NewSession()
	const calls = 20000
	msgs := make([]*jsonrpc.Message, 256)
	for i := range msgs {
		k := (i*7919)%n + 1
		line := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"get_weather","arguments":{"units":"metric","location":"city-` + strconv.Itoa(k) + `"}}}`
		m, err := jsonrpc.Parse([]byte(line))
		if err != nil {
			return err
		}
		msgs[i] = m
	}
	t := time.Now()
	for i := range calls {
		p := s.Handle(msgs[i%len(msgs)])
		if p.Miss != nil {
			return fmt.Errorf("call %d missed: %s", i, p.Miss.Message())
		}
	}
	perCall := time.Since(t) / calls
	runtime.KeepAlive(eng)
	res := scaleResult{Bytes: fi.Size(), LoadMs: float64(load.Microseconds()) / 1000, PerCallNs: float64(perCall.Nanoseconds()), PeakKiB: peakKiB()}
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

// scale runs the scale group: each size in its own process, three times,
// interleaved; the table shows medians.
func scale(dir string) error {
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
	results := map[int][]scaleResult{}
	for range 3 {
		for _, n := range scaleSizes {
			var out bytes.Buffer
			cmd := exec.Command(self, "-scale-child", paths[n])
			cmd.Stdout, cmd.Stderr = &out, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("scale %d: %w", n, err)
			}
			var r scaleResult
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				return fmt.Errorf("scale %d: %w", n, err)
			}
			results[n] = append(results[n], r)
		}
	}
	med := func(n int, f func(scaleResult) float64) float64 {
		var xs []float64
		for _, r := range results[n] {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	base := med(scaleSizes[0], func(r scaleResult) float64 { return r.PerCallNs })
	fmt.Println("| cassette | file | load (bar ≤ 1 s) | per-call replay | per call vs 10 (bar ≤ 1.2) | peak memory | bar: 2 × file + 30 MiB |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, n := range scaleSizes {
		size := results[n][0].Bytes
		peak := med(n, func(r scaleResult) float64 { return float64(r.PeakKiB) }) * 1024
		limit := 2*float64(size) + 30*(1<<20)
		perCall := med(n, func(r scaleResult) float64 { return r.PerCallNs })
		verdict := "met"
		if peak > limit {
			verdict = "NOT met"
		}
		fmt.Printf("| %d interactions | %.1f MiB | %.0f ms | %.1f µs | %.2f | %.1f MiB | %.1f MiB %s |\n", n, float64(size)/(1<<20),
			med(n, func(r scaleResult) float64 { return r.LoadMs }), perCall/1000, perCall/base, peak/(1<<20), limit/(1<<20), verdict)
	}
	fmt.Println()
	return nil
}
