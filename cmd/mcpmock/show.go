package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/view"
)

// showOptions say how cassette show prints.
type showOptions struct {
	// color: errors red, the client's messages cyan, the server's green.
	color bool
	// full prints each message whole, after its line.
	full bool
}

// showTimeline prints a cassette as a readable timeline: one line per
// message (who sent it, its id, method, tool and what it says: the
// arguments of a call, the text of a result, the tools of a list, the
// values of a progress notification; errors marked), from the model that
// the web view draws (package view). Time offsets and latencies are
// printed only when the recording kept them (--keep-timing): a cassette
// written for stable files has none, and nothing is made up for it. The
// secrets that the default redaction rules know are hidden, as in the live
// log.
func showTimeline(w io.Writer, c *cassettes.Cassette, o showOptions) error {
	m := c.Meta
	fmt.Fprintf(w, "cassette v%d, recorded %s by %s over %s from %s\n", c.Version, orDash(m.RecordedAt), orDash(m.RecordedBy), orDash(m.Transport), orDash(strings.Join(m.Server, " ")))
	if si := m.ServerInfo; si != nil {
		fmt.Fprintf(w, "server %s %s\n", orDash(si.Name), si.Version)
	}
	c.Redact(cassettes.DefaultRedactRules())
	doc := view.Build("", c)
	timed := false
	for _, msg := range doc.Messages {
		timed = timed || msg.AtMs > 0
	}
	if !timed {
		fmt.Fprintln(w, "(recorded without timing: messages in the order they passed)")
	}
	lastURL, interaction := "", 0
	unanswered := false // the current interaction's request has no answer
	noAnswer := func() {
		if unanswered {
			printLine(w, o, "     ✗ no response was recorded", true, "")
		}
		unanswered = false
	}
	for _, msg := range doc.Messages {
		stamp := ""
		if timed {
			stamp = fmt.Sprintf("%10.1fms  ", msg.AtMs)
		}
		if h := msg.HTTP; h != nil && h.URL != "" && h.URL != lastURL {
			// The request's path and query, when they change.
			lastURL = h.URL
			printLine(w, o, stamp+"   url "+lastURL, false, "")
		}
		prefix := "     "
		if msg.Interaction != interaction {
			noAnswer()
			interaction = msg.Interaction
			prefix = fmt.Sprintf("#%d ", interaction)
			unanswered = msg.Kind == "request" && msg.Pair < 0
		}
		text := prefix + showArrow(msg.From) + " " + showLabel(msg)
		if timed && msg.Pair >= 0 && msg.Pair < msg.Seq && (msg.Kind == "response" || msg.Kind == "error") {
			text += fmt.Sprintf(" (%.1fms)", msg.AtMs-doc.Messages[msg.Pair].AtMs)
		}
		full := ""
		if o.full {
			full = string(msg.JSON)
			if msg.Kind == "raw" {
				full = msg.Raw
			}
		}
		printLine(w, o, stamp+text, msg.Kind == "error" || msg.IsError || msg.Kind == "raw", full)
	}
	noAnswer()
	return nil
}

// showLabel is what a message's line says after its arrow.
func showLabel(m view.Message) string {
	var parts []string
	if m.ID != "" {
		parts = append(parts, m.ID)
	}
	switch m.Kind {
	case "raw":
		return "not JSON-RPC: " + m.Summary
	case "response":
		parts = append(parts, "result")
	case "error":
		parts = append(parts, "✗ error")
	default:
		parts = append(parts, m.Method)
	}
	if m.Tool != "" && m.Kind == "request" {
		parts = append(parts, m.Tool)
	}
	switch {
	case m.IsError:
		parts = append(parts, "✗ tool error: "+m.Error)
	case m.Kind == "error":
		parts = append(parts, m.Error)
	case m.Summary != "":
		parts = append(parts, m.Summary)
	}
	return strings.Join(parts, " ")
}

func showArrow(from string) string {
	if from == string(cassettes.FromClient) {
		return livelog.ToServer
	}
	return livelog.ToClient
}

// printLine prints one line of the timeline, and the whole message under
// it when full is set; on a terminal, errors are red, the client's messages
// cyan and the server's green.
func printLine(w io.Writer, o showOptions, text string, bad bool, full string) {
	if o.color {
		switch {
		case bad:
			text = "\x1b[31m" + text + "\x1b[0m"
		case strings.Contains(text, livelog.ToServer):
			text = "\x1b[36m" + text + "\x1b[0m"
		case strings.Contains(text, livelog.ToClient):
			text = "\x1b[32m" + text + "\x1b[0m"
		}
	}
	fmt.Fprintln(w, text)
	if full != "" {
		fmt.Fprintln(w, "       "+full)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
