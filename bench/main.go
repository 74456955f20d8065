// Command bench is mcpmock's benchmark harness: it builds what it needs,
// runs each comparison interleaved (A B A B...) and prints a table of the
// median ratios, because these machines are noisy.
//
//	go run ./bench                 # everything, some minutes
//	go run ./bench -md             # the same, and writes bench/RESULTS.md
//	go run ./bench -only stdio     # one group: stdio, replay, http, scale, mcpmocktest, growth
//
// The tables go to stdout; -md also writes them to bench/RESULTS.md
// (-results FILE to another file), with the date, the machine and the
// command that measured them: that file is written by the harness, never by
// hand. The harness exits 1 when a cost grows faster than its input (the
// growth group), after the tables are written.
//
// Groups:
//   - stdio: sequential tools/call round trips of a go-sdk client with a
//     go-sdk server: direct, through a bare byte relay (the floor of any tap),
//     and through `mcpmock record`;
//   - replay: `mcpmock replay` of the recorded session against the
//     hand-written go-sdk server answering the same calls, same client;
//   - http: the same over Streamable HTTP: the tap against a bare
//     httputil.ReverseProxy (stateful and stateless servers), and the replay
//     server against the go-sdk server;
//   - scale: cassettes of 10, 1,000 and 100,000 interactions: load time,
//     per-call replay time, peak memory against cassette size;
//   - mcpmocktest: start, connect, one call and close, from its benchmark;
//   - growth: the cost of each input at three sizes (batches, pending
//     requests, misses, cassette size, HTTP sessions): linear or not.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	rounds := flag.Int("rounds", 7, "interleaved rounds per comparison")
	calls := flag.Int("calls", 2000, "calls per round")
	only := flag.String("only", "", "comma-separated groups to run (stdio, replay, http, scale, mcpmocktest, growth); empty for all")
	scaleChild := flag.String("scale-child", "", "internal: measure one cassette in this process")
	flag.IntVar(&scaleCalls, "scale-calls", scaleCalls, "calls through one session in each scale measurement")
	flag.StringVar(&growthOnly, "growth-only", "", "run only the growth cases whose name contains this text")
	flag.StringVar(&oldMcpmock, "old-mcpmock", "", "an earlier build of mcpmock whose stdio tap runs in the same rounds, compared with this one's")
	md := flag.Bool("md", false, "also write the tables to bench/RESULTS.md, with the date, the machine and the command")
	results := flag.String("results", "", "also write the tables to this file (as -md does)")
	flag.Parse()
	if *md && *results == "" {
		*results = filepath.Join("bench", "RESULTS.md")
	}
	if *scaleChild != "" {
		if err := scaleChildMain(*scaleChild); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	loadBefore, cpuBefore := loadAverage(), readCPUTimes()
	var tables bytes.Buffer
	err := run(io.MultiWriter(os.Stdout, &tables), *rounds, *calls, *only)
	if err != nil && !errors.Is(err, errGrowth) {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if *results != "" {
		if err := writeResults(*results, loadBefore, cpuBefore, tables.Bytes()); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "bench: wrote", *results)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes, or
// "unknown" where /proc has none.
func loadAverage() string {
	load, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(load))[:3], " ")
}

// cpuTimes is the machine's CPU time so far, in clock ticks: all of it and
// the part that the hypervisor gave to other machines (steal).
type cpuTimes struct{ total, steal int64 }

// readCPUTimes reads the machine's CPU times from /proc/stat; zero where
// there is none.
func readCPUTimes() cpuTimes {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	return parseCPUTimes(stat)
}

// parseCPUTimes reads the "cpu" line of /proc/stat: user, nice, system,
// idle, iowait, irq, softirq, steal, guest, guest_nice (guest time is
// counted in user time already, so it is left out of the total).
func parseCPUTimes(stat []byte) cpuTimes {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, v := range f[1:9] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		t.total += n
		if i == 7 {
			t.steal = n
		}
	}
	return t
}

// stolen describes the share of the machine's time that the hypervisor
// took between two readings: on a shared host, the figures of a run with
// much of it stolen are slower and noisier than the code is.
func stolen(from, to cpuTimes) string {
	total := to.total - from.total
	if total <= 0 || from.total == 0 {
		return "CPU stolen by the host unknown"
	}
	return fmt.Sprintf("%.1f%% of the CPU time stolen by the host during the run", 100*float64(to.steal-from.steal)/float64(total))
}

// writeResults writes the tables of a run to path, after a header that says
// when, how and where they were measured, so that the file can be compared
// with a later run of the same command.
func writeResults(path, loadBefore string, cpuBefore cpuTimes, tables []byte) error {
	var b bytes.Buffer
	b.WriteString("# Benchmark results\n\n")
	b.WriteString("Written by `go run ./bench -md` (bench/main.go); do not edit by hand. How to read the tables and what each\n")
	b.WriteString("bar means: [docs/performance.md](../docs/performance.md).\n\n")
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- command: `%s`\n", strings.TrimSpace("go run ./bench "+strings.Join(os.Args[1:], " ")))
	fmt.Fprintf(&b, "- machine: %s/%s, nproc %d, %s; load average %s at the start, %s at the end; %s\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadBefore, loadAverage(), stolen(cpuBefore, readCPUTimes()))
	b.Write(tables)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the results: %w", err)
	}
	return nil
}

// oldMcpmock is the -old-mcpmock binary ("" for none).
var oldMcpmock string

// env holds the built binaries and a scratch directory.
type env struct {
	dir                               string
	mcpmock, server, relay, httprelay string
	floor, httpfloor                  string // bench/floor, bench/httpfloor: the least a replay can do
}

func build(dir string) (*env, error) {
	e := &env{dir: dir, mcpmock: filepath.Join(dir, "mcpmock"), server: filepath.Join(dir, "server"), relay: filepath.Join(dir, "relay"), httprelay: filepath.Join(dir, "httprelay"), floor: filepath.Join(dir, "floor"), httpfloor: filepath.Join(dir, "httpfloor")}
	for pkg, out := range map[string]string{"./cmd/mcpmock": e.mcpmock, "./bench/server": e.server, "./bench/relay": e.relay, "./bench/httprelay": e.httprelay, "./bench/floor": e.floor, "./bench/httpfloor": e.httpfloor} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("build %s: %w", pkg, err)
		}
	}
	return e, nil
}

func run(w io.Writer, rounds, calls int, only string) error {
	want := func(g string) bool { return only == "" || slices.Contains(strings.Split(only, ","), g) }
	dir, err := os.MkdirTemp("", "mcpmock-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	e, err := build(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "mcpmock benchmarks, %s, %d rounds × %d sequential calls, median of per-round ratios\n\n", time.Now().UTC().Format("2006-01-02"), rounds, calls)
	var rows []row
	var cpus, httpCPUs []cpuRow
	cassette := filepath.Join(dir, "recorded.json")
	if want("stdio") || want("replay") || want("scale") {
		// Record the session the replay benchmark serves.
		if _, err := stdioRun(append([]string{e.mcpmock, "record", "--quiet", "-c", cassette, "--"}, e.server), calls); err != nil {
			return fmt.Errorf("record the replay cassette: %w", err)
		}
	}
	if want("stdio") {
		// mcpmock runs as a user runs it, its live log on (stderr is a
		// pipe that the bench drains, as a client that captures it), and
		// with --quiet beside it, to show what the log costs.
		direct := []string{e.server}
		relay := []string{e.relay, e.server}
		tap := []string{e.mcpmock, "record", "-c", filepath.Join(dir, "tap.json"), "--", e.server}
		quiet := []string{e.mcpmock, "record", "--quiet", "-c", filepath.Join(dir, "quiet.json"), "--", e.server}
		sides := [][]string{direct, relay, tap, quiet}
		if oldMcpmock != "" {
			// An earlier build's tap, in the same rounds: what a change
			// did, measured against the same noise.
			sides = append(sides, []string{oldMcpmock, "record", "-c", filepath.Join(dir, "old.json"), "--", e.server})
		}
		res, err := interleave(rounds, calls, sides...)
		if err != nil {
			return err
		}
		if len(res) > 4 {
			rows = append(rows, compare("stdio: tap / -old-mcpmock's tap", res[2], res[4], 0))
			cpus = append(cpus,
				cpuRow{name: "stdio: -old-mcpmock's tap beyond the bare relay, each less the server's own CPU", a: res[4], b: res[1], own: true},
				cpuRow{name: "stdio: the tap beyond -old-mcpmock's, each less the server's own CPU", a: res[2], b: res[4], own: true})
		}
		rows = append(rows,
			compare("stdio: relay / direct", res[1], res[0], 0),
			compare("stdio: tap / relay", res[2], res[1], 1.0),
			compare("stdio: tap --quiet / relay", res[3], res[1], 0),
			compare("stdio: tap / direct", res[2], res[0], 0))
		cpus = append(cpus,
			cpuRow{name: "stdio: the go-sdk server alone", a: res[0]},
			cpuRow{name: "stdio: bare relay and server", a: res[1]},
			cpuRow{name: "stdio: `mcpmock record` and server", a: res[2]},
			cpuRow{name: "stdio: the tap beyond the bare relay", a: res[2], b: res[1], bar: 20 * time.Microsecond},
			cpuRow{name: "stdio: the bare relay alone (less the server's own CPU)", a: res[1], own: true},
			cpuRow{name: "stdio: `mcpmock record` alone (less the server's own CPU)", a: res[2], own: true},
			cpuRow{name: "stdio: `mcpmock record --quiet` alone (less the server's own CPU)", a: res[3], own: true},
			cpuRow{name: "stdio: the tap beyond the bare relay, each less the server's own CPU", a: res[2], b: res[1], own: true, bar: 20 * time.Microsecond},
			cpuRow{name: "stdio: the tap's live log (record less record --quiet, each less the server's own CPU)", a: res[2], b: res[3], own: true})
	}
	if want("replay") {
		server := []string{e.server}
		replay := []string{e.mcpmock, "replay", "-c", cassette}
		quiet := []string{e.mcpmock, "replay", "--quiet", "-c", cassette}
		floor := []string{e.floor, cassette}
		res, err := interleave(rounds, calls, server, replay, quiet, floor)
		if err != nil {
			return err
		}
		rows = append(rows,
			compare("stdio: replay / go-sdk server", res[1], res[0], 2.0),
			compare("stdio: replay --quiet / go-sdk server", res[2], res[0], 0),
			compare("stdio: floor / go-sdk server", res[3], res[0], 0))
		cpus = append(cpus,
			cpuRow{name: "stdio: the go-sdk server (replay's baseline)", a: res[0]},
			cpuRow{name: "stdio: `mcpmock replay`", a: res[1], bar: 25 * time.Microsecond},
			cpuRow{name: "stdio: `mcpmock replay --quiet`", a: res[2]},
			cpuRow{name: "stdio: the floor, a server that only answers in order (bench/floor)", a: res[3]},
			cpuRow{name: "stdio: `mcpmock replay` beyond the floor", a: res[1], b: res[3]},
			cpuRow{name: "stdio: the replay's live log (replay less replay --quiet)", a: res[1], b: res[2]})
	}
	if want("http") {
		hr, hc, err := httpGroup(e, rounds, calls, dir)
		if err != nil {
			return err
		}
		rows = append(rows, hr...)
		httpCPUs = hc
	}
	if len(rows) > 0 {
		printRows(w, rows)
	}
	if len(cpus) > 0 {
		printCPU(w, "CPU time a call (rusage of the spawned process and its children)", cpus)
	}
	if len(httpCPUs) > 0 {
		printCPU(w, "CPU time a call of the HTTP service alone (its threads' run time, /proc/PID/task/*/schedstat)", httpCPUs)
	}
	if want("scale") {
		if err := scale(w, dir); err != nil {
			return err
		}
		r, err := scaleServed(e, dir, cassette, rounds, calls)
		if err != nil {
			return err
		}
		printRows(w, []row{r})
	}
	if want("mcpmocktest") {
		if err := mcpmocktestGroup(w); err != nil {
			return err
		}
	}
	if want("growth") {
		failed, err := growth(w, e, dir)
		if err != nil {
			return err
		}
		if failed {
			return errGrowth
		}
	}
	return nil
}

// errGrowth fails the harness, after its tables are written, when a cost
// grew faster than its input.
var errGrowth = errors.New("a cost grew faster than its input (see the cost-growth table)")

// cpuRow is one line of the CPU table: a side's CPU time a call, or (with
// b) the difference of two sides', median of the rounds.
type cpuRow struct {
	name string
	a, b *result
	bar  time.Duration
	// own leaves out what bench/server used itself in each run: the
	// middle process's own CPU, without the server's, whose figure varies
	// from run to run by more than the tap costs.
	own bool
}

func printCPU(w io.Writer, header string, rows []cpuRow) {
	fmt.Fprintf(w, "| %s | median | min–max of rounds | bar |\n", header)
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range rows {
		var xs []float64
		for i, c := range r.a.cpu {
			if r.own {
				c -= r.a.server[i]
			}
			if r.b != nil {
				c -= r.b.cpu[i]
				if r.own {
					c += r.b.server[i]
				}
			}
			xs = append(xs, float64(c))
		}
		m := time.Duration(median(xs))
		bar := "—"
		if r.bar > 0 {
			bar = fmt.Sprintf("≤ %s %s", micros(r.bar), metText(m <= r.bar))
		}
		lo, hi := slices.Min(xs), slices.Max(xs)
		fmt.Fprintf(w, "| %s | %s | %s – %s | %s |\n", r.name, micros(m), micros(time.Duration(lo)), micros(time.Duration(hi)), bar)
	}
	fmt.Fprintln(w)
}

// result is one side's runs.
type result struct {
	rate []float64       // calls/s per round
	lat  []time.Duration // every call's latency
	// cpu is the CPU time a call of the process the client spawned, with
	// its children (rusage at its exit: user and system), per round: the
	// run's CPU time less that of a run of the warm-up alone, over the
	// calls, so that starting the process is not counted.
	cpu []time.Duration
	// server is the part of cpu that bench/server used itself, counted
	// the same way (0 for another server: the replay, the floor).
	server []time.Duration
}

// interleave runs each side once per round, rotating the order, and
// returns the sides' results.
func interleave(rounds, calls int, sides ...[]string) ([]*result, error) {
	out := make([]*result, len(sides))
	for i := range out {
		out[i] = &result{}
	}
	for r := range rounds {
		for k := range sides {
			i := (k + r) % len(sides)
			// The warm-up alone first: a profile (MCPMOCK_CPUPROFILE) is
			// then the full run's.
			warm, err := stdioRun(sides[i], 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", strings.Join(sides[i], " "), err)
			}
			res, err := stdioRun(sides[i], calls)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", strings.Join(sides[i], " "), err)
			}
			out[i].rate = append(out[i].rate, res.rate[0])
			out[i].lat = append(out[i].lat, res.lat...)
			out[i].cpu = append(out[i].cpu, (res.cpu[0]-warm.cpu[0])/time.Duration(calls))
			out[i].server = append(out[i].server, (res.server[0]-warm.server[0])/time.Duration(calls))
		}
	}
	return out, nil
}

// stdioRun connects a go-sdk client to the command and times calls
// sequential tools/call round trips (after a warm-up).
func stdioRun(argv []string, calls int) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = io.Discard
	serverCPU, err := os.CreateTemp("", "bench-server-cpu-")
	if err != nil {
		return nil, err
	}
	serverCPU.Close()
	defer os.Remove(serverCPU.Name())
	cmd.Env = append(os.Environ(), "BENCH_SERVER_RUSAGE="+serverCPU.Name()) // bench/server writes its own CPU there
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	res, err := callLoop(ctx, cs, calls)
	if err := errors.Join(err, cs.Close()); err != nil {
		return nil, err
	}
	// The transport's Close waits for the process, whose rusage then
	// counts the children it waited for (the server behind a tap).
	if cmd.ProcessState == nil {
		return nil, fmt.Errorf("%s: no exit status after close", argv[0])
	}
	res.cpu = []time.Duration{cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	own, _ := os.ReadFile(serverCPU.Name())
	ns, _ := strconv.ParseInt(string(own), 10, 64) // 0 for a server that is not bench/server
	res.server = []time.Duration{time.Duration(ns)}
	return res, nil
}

func callLoop(ctx context.Context, cs *mcp.ClientSession, calls int) (*result, error) {
	call := func(i int) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprintf("m%d", i%64)}})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("call %d: tool error", i)
		}
		return nil
	}
	for i := range 64 {
		if err := call(i); err != nil {
			return nil, err
		}
	}
	res := &result{lat: make([]time.Duration, 0, calls)}
	start := time.Now()
	for i := range calls {
		t := time.Now()
		if err := call(i); err != nil {
			return nil, err
		}
		res.lat = append(res.lat, time.Since(t))
	}
	res.rate = []float64{float64(calls) / max(time.Since(start).Seconds(), 1e-9)}
	return res, nil
}

// row is one line of the table: a ratio of calls/s, A over B.
type row struct {
	name       string
	a, b       *result
	ratio, bar float64
	ratios     []float64
}

func compare(name string, a, b *result, bar float64) row {
	r := row{name: name, a: a, b: b, bar: bar}
	for i := range a.rate {
		r.ratios = append(r.ratios, a.rate[i]/b.rate[i])
	}
	r.ratio = median(r.ratios)
	return r
}

func printRows(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| comparison (A / B) | calls/s A | calls/s B | ratio (median) | bar | p50 A / B | p99 A / B |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		bar := "—"
		if r.bar > 0 {
			bar = fmt.Sprintf("≥ %.2f %s", r.bar, metText(r.ratio >= r.bar))
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.3f | %s | %s / %s | %s / %s |\n", r.name,
			median(r.a.rate), median(r.b.rate), r.ratio, bar,
			pct(r.a.lat, 50), pct(r.b.lat, 50), pct(r.a.lat, 99), pct(r.b.lat, 99))
	}
	fmt.Fprintln(w)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pct(lat []time.Duration, p int) string {
	s := slices.Clone(lat)
	slices.Sort(s)
	if len(s) == 0 {
		return "-"
	}
	d := s[min(len(s)-1, len(s)*p/100)]
	return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
}
