package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/replayer"
)

// cassetteVerify is "mcpmock cassette verify": the drift check. It replays
// the cassette's client requests against the live server and reports what
// differs: tools added or removed, input schema changes (breaking: a tool
// removed, a required argument added, a property's type changed or removed;
// not breaking: a tool or an optional argument added), and results that
// changed. Breaking drift fails the command.
func (e *env) cassetteVerify(ctx context.Context, args []string) error {
	var path, upstream string
	var failOnChange bool
	fs := newFlagSet("cassette verify", "mcpmock cassette verify -c CASSETTE [flags] -- COMMAND [ARG...]\n  mcpmock cassette verify -c CASSETTE [flags] --upstream URL", e.stdout)
	fs.StringVarP(&path, "cassette", "c", "", "cassette file (required)")
	fs.StringVar(&upstream, "upstream", "", "the live server at `URL` (Streamable HTTP, or an HTTP+SSE server at its SSE URL) instead of a command")
	fs.BoolVar(&failOnChange, "fail-on-change", false, "also fail when results changed or the change is not breaking")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if path == "" {
		return usagef("cassette verify needs -c CASSETTE")
	}
	if (fs.NArg() == 0) == (upstream == "") {
		return usagef("cassette verify needs the live server: -- COMMAND [ARG...] or --upstream URL")
	}
	c, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	up, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: fs.Args(), URL: upstream, Stderr: e.stderr})
	if err != nil {
		return err
	}
	defer up.Close()
	var drifts []cassettes.Drift
	failed := map[string]*failure{} // calls that failed, by their error
	for i, in := range c.Interactions {
		if in.From != cassettes.FromClient || in.Scripted() {
			continue
		}
		if in.Notification != nil {
			if err := up.Notify(ctx, in.Notification); err != nil {
				return err
			}
			continue
		}
		if in.Request == nil {
			continue
		}
		live, err := up.Call(ctx, in.Request)
		if err != nil {
			// Calls that fail alike (a live server that refuses the
			// recorded protocol version answers every request with the same
			// HTTP 400) are said once, with the interactions they are: the
			// error without the method it names.
			method := ""
			if m, perr := jsonrpc.Parse(in.Request); perr == nil {
				method = m.Method
			}
			key := strings.Replace(err.Error(), " "+method+": ", " ", 1)
			if g, ok := failed[key]; ok {
				g.interactions = append(g.interactions, i+1)
				if !slices.Contains(g.methods, method) {
					g.methods = append(g.methods, method)
				}
				continue
			}
			failed[key] = &failure{at: len(drifts), interactions: []int{i + 1}, methods: []string{method}}
		}
		drifts = append(drifts, cassettes.DriftOf(i, &in, live, err)...)
	}
	for msg, g := range failed {
		if len(g.interactions) > 1 {
			drifts[g.at] = cassettes.Drift{Breaking: true, Text: fmt.Sprintf("interactions %s (%s): now fail alike: %s", joinInts(g.interactions), strings.Join(g.methods, ", "), msg)}
		}
	}
	var breaking, other int
	for _, d := range drifts {
		if d.Breaking {
			breaking++
		} else {
			other++
		}
		fmt.Fprintln(e.stdout, d)
	}
	switch {
	case breaking > 0:
		return fmt.Errorf("%s: breaking drift: %d breaking and %d other differences from the live server", path, breaking, other)
	case other > 0 && failOnChange:
		return fmt.Errorf("%s: drift: %d differences from the live server", path, other)
	case other > 0:
		fmt.Fprintf(e.stdout, "%s: %d differences, none breaking\n", path, other)
	default:
		fmt.Fprintf(e.stdout, "%s: no drift\n", path)
	}
	return nil
}

// failure is the calls of cassette verify that failed with one error: the
// place of its drift line, the 1-based interactions and their methods.
type failure struct {
	at           int
	interactions []int
	methods      []string
}

// joinInts writes 2, 4 and 6.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
