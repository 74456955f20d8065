package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// showTimeline prints a cassette as a readable timeline: one line per
// message, with its time offset, errors marked (in red on a terminal).
func showTimeline(w io.Writer, c *cassettes.Cassette, color bool) error {
	m := c.Meta
	fmt.Fprintf(w, "cassette v%d, recorded %s by %s over %s from %s\n", c.Version, orDash(m.RecordedAt), orDash(m.RecordedBy), orDash(m.Transport), orDash(strings.Join(m.Server, " ")))
	if si := m.ServerInfo; si != nil {
		fmt.Fprintf(w, "server %s %s\n", orDash(si.Name), si.Version)
	}
	lastURL := ""
	for i, in := range c.Interactions {
		start := time.Duration(float64(in.AtMs) * float64(time.Millisecond))
		if in.HTTP != nil && in.HTTP.URL != "" && in.HTTP.URL != lastURL {
			// The request's path and query, when they change.
			lastURL = in.HTTP.URL
			line(w, color, in.AtMs, "   url "+lastURL, false)
		}
		switch {
		case in.Raw != nil:
			line(w, color, in.AtMs, fmt.Sprintf("#%d %s not JSON-RPC: %.80s", i+1, arrow(in.From), *in.Raw), true)
		case in.Notification != nil:
			describe(w, color, fmt.Sprintf("#%d ", i+1), in.From, in.AtMs, in.Notification, 0)
		default:
			describe(w, color, fmt.Sprintf("#%d ", i+1), in.From, in.AtMs, in.Request, 0)
			for _, x := range in.Exchange {
				if x.Raw != nil {
					line(w, color, x.AtMs, fmt.Sprintf("     %s not JSON-RPC: %.80s", arrow(x.From), *x.Raw), true)
					continue
				}
				describe(w, color, "     ", x.From, x.AtMs, x.Message, 0)
			}
			if in.Response == nil {
				line(w, color, in.AtMs, "     ✗ no response was recorded", true)
				continue
			}
			lat := time.Duration(float64(in.Response.AtMs)*float64(time.Millisecond)) - start
			describe(w, color, "     ", in.Response.From, in.Response.AtMs, in.Response.Message, max(lat, time.Microsecond))
		}
	}
	return nil
}

func describe(w io.Writer, color bool, prefix string, from cassettes.Direction, at cassettes.Millis, raw []byte, lat time.Duration) {
	msg, err := jsonrpc.Parse(raw)
	if err != nil {
		line(w, color, at, prefix+"invalid message", true)
		return
	}
	text, level, _ := livelog.Describe(arrow(from), msg, lat, "")
	line(w, color, at, prefix+text, level >= slog.LevelWarn)
}

func arrow(from cassettes.Direction) string {
	if from == cassettes.FromClient {
		return livelog.ToServer
	}
	return livelog.ToClient
}

// line prints one line of the timeline; on a terminal, errors are red,
// the client's messages cyan, the server's green and the time dim.
func line(w io.Writer, color bool, at cassettes.Millis, text string, bad bool) {
	stamp := fmt.Sprintf("%10.1fms", float64(at))
	if color {
		stamp = "\x1b[2m" + stamp + "\x1b[0m"
		switch {
		case bad:
			text = "\x1b[31m" + text + "\x1b[0m"
		case strings.Contains(text, livelog.ToServer):
			text = "\x1b[36m" + text + "\x1b[0m"
		case strings.Contains(text, livelog.ToClient):
			text = "\x1b[32m" + text + "\x1b[0m"
		}
	}
	fmt.Fprintf(w, "%s  %s\n", stamp, text)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
