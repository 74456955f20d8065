package cassettes

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// snoopLine is one line of an mcpsnoop trace (github.com/kerlenton/mcpsnoop,
// its --trace-file): a message that passed, or the meta of a session.
type snoopLine struct {
	SessionID   string          `json:"session_id"`
	ServerLabel string          `json:"server_label"`
	Seq         int64           `json:"seq"`
	TS          string          `json:"ts"`
	Direction   string          `json:"direction"`
	Transport   string          `json:"transport"`
	Raw         json.RawMessage `json:"raw"`
	// Over HTTP.
	ConnID          json.RawMessage `json:"conn_id"`
	Status          int             `json:"status"`
	ProtocolVersion string          `json:"mcp_protocol_version"`
}

// snoopMeta is the raw object of a "meta" line.
type snoopMeta struct {
	Command []string `json:"command"`
	URL     string   `json:"url"`
}

// ImportMCPSnoop reads an mcpsnoop trace: one JSON object a line with
// session_id, server_label, seq, ts, direction ("meta", "c2s" or "s2c"),
// transport and raw (the JSON-RPC message, or the session's meta), and over
// HTTP conn_id, status and mcp_protocol_version. A trace of several sessions
// imports them one after the other, each whole, in the order their first
// line comes (by seq within a session). A line that is not such an object is
// an error naming it; a raw that is a string (a line that was not JSON) is
// kept as raw text with a warning.
func ImportMCPSnoop(name string, data []byte) (*Capture, error) {
	cp := &Capture{Format: "mcpsnoop"}
	type entry struct {
		line snoopLine
		n    int
		at   time.Time
	}
	var order []string
	sessions := map[string][]entry{}
	for n := 1; len(data) > 0; n++ {
		text := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		fail := func(format string, a ...any) error {
			return &importError{name: name, where: fmt.Sprintf("line %d", n), msg: fmt.Sprintf(format, a...)}
		}
		var l snoopLine
		if err := json.Unmarshal(text, &l); err != nil {
			return nil, fail("not an mcpsnoop trace line: %s", jsonError(err))
		}
		switch l.Direction {
		case "meta", "c2s", "s2c":
		case "":
			return nil, fail("no direction (want meta, c2s or s2c)")
		default:
			return nil, fail("unknown direction %q (want meta, c2s or s2c)", l.Direction)
		}
		at, err := time.Parse(time.RFC3339Nano, l.TS)
		if err != nil {
			return nil, fail("ts %q is not an RFC 3339 time", l.TS)
		}
		if l.Direction != "meta" && (len(l.Raw) == 0 || string(l.Raw) == "null") {
			return nil, fail("a %s line with no raw message", l.Direction)
		}
		if _, ok := sessions[l.SessionID]; !ok {
			order = append(order, l.SessionID)
		}
		sessions[l.SessionID] = append(sessions[l.SessionID], entry{line: l, n: n, at: at})
	}
	exchanges := map[string]uint64{}
	answered := map[uint64]bool{}
	for _, id := range order {
		es := sessions[id]
		slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.line.Seq, b.line.Seq) })
		for _, e := range es {
			l := e.line
			where := fmt.Sprintf("line %d", e.n)
			if cp.Start.IsZero() || e.at.Before(cp.Start) {
				cp.Start = e.at
			}
			if cp.Meta.Transport == "" && l.Transport != "" {
				cp.Meta.Transport = snoopTransport(l.Transport)
			}
			if l.Direction == "meta" {
				var m snoopMeta
				if json.Unmarshal(l.Raw, &m) == nil && cp.Meta.Server == nil {
					switch {
					case len(m.Command) > 0:
						cp.Meta.Server = m.Command
					case m.URL != "":
						cp.Meta.Server = []string{m.URL}
					}
				}
				continue
			}
			if cp.Meta.Server == nil && l.ServerLabel != "" {
				cp.Meta.Server = []string{l.ServerLabel}
			}
			ev := CaptureEvent{From: FromClient, At: e.at, Data: snoopMessage(l.Raw)}
			if l.Direction == "s2c" {
				ev.From = FromServer
			}
			if len(l.ConnID) > 0 && string(l.ConnID) != "null" {
				key := id + "\x00" + string(l.ConnID)
				ex := exchanges[key]
				if ev.From == FromClient {
					// A client message opens an exchange on its connection.
					ex = uint64(len(answered) + 1)
					exchanges[key] = ex
					answered[ex] = false
					var h map[string][]string
					if l.ProtocolVersion != "" {
						h = map[string][]string{mcp.HeaderProtocolVersion: {l.ProtocolVersion}}
					}
					ev.HTTP = &CaptureHTTP{Exchange: ex, RequestHeaders: h}
				} else {
					if ex != 0 && !answered[ex] && l.Status != 0 {
						cp.Events = append(cp.Events, CaptureEvent{From: FromServer, At: e.at, HTTP: &CaptureHTTP{Exchange: ex, Response: true, Status: l.Status}})
					}
					answered[ex] = true
					ev.HTTP = &CaptureHTTP{Exchange: ex}
				}
			}
			if len(l.Raw) > 0 && l.Raw[0] == '"' {
				cp.Warnings = append(cp.Warnings, where+": the message was not JSON; kept as raw text")
				cp.Events = append(cp.Events, ev)
				continue
			}
			cp.keepMessage(where, ev)
		}
	}
	if len(cp.Events) == 0 {
		return nil, &importError{name: name, msg: "no messages (no c2s or s2c line)"}
	}
	cp.Meta.RecordedBy = "mcpsnoop"
	cp.Meta.RecordedAt = cp.Start.UTC().Format(time.RFC3339)
	return cp, nil
}

// snoopMessage is the message of a raw member: the JSON-RPC message as it
// is, or the text of a string (a line that was not JSON).
func snoopMessage(raw json.RawMessage) []byte {
	if raw[0] == '"' {
		if s, err := strconv.Unquote(string(raw)); err == nil {
			return []byte(s)
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []byte(s)
		}
	}
	return bytes.Clone(raw)
}

// snoopTransport names mcpsnoop's transport as a cassette does.
func snoopTransport(t string) string {
	switch t {
	case "stdio":
		return "stdio"
	case "sse":
		return "sse"
	}
	return "streamable-http"
}
