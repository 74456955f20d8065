package view

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Replay is what a replay made of a cassette: in a live view, of the
// traffic so far; from a report (mcpmock view --report), of the run that
// wrote it.
type Replay struct {
	// Report is the report file the annotations come from ("" in a live
	// view).
	Report string `json:"report,omitempty"`
	// Recorded names the cassette on the page that holds the recorded
	// interactions (in a live view, the cassette replayed, beside the
	// traffic); "" for this one.
	Recorded string `json:"recorded,omitempty"`
	// Misses are the requests the cassette did not answer, with why.
	Misses []Miss `json:"misses"`
	// Unused are the recorded client requests no client used (in a live
	// view: so far).
	Unused []Recorded `json:"unused"`
	// Faults are the scripted faults and how often each fired (from a
	// report).
	Faults []Fault `json:"faults,omitempty"`
}

// Miss is one request that matched nothing.
type Miss struct {
	// Seq is the request in the live traffic; -1 from a report.
	Seq    int    `json:"seq"`
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Message is the one-line explanation, Explanation the whole one
	// with the field diff of each candidate.
	Message     string `json:"message"`
	Explanation string `json:"explanation,omitempty"`
	// Candidates are the closest recorded requests, closest first.
	Candidates []Candidate `json:"candidates"`
}

// Candidate is a recorded request close to a missed one: its interaction
// (1-based), how it differs, and the diff (-recorded +live).
type Candidate struct {
	Interaction int      `json:"interaction"`
	Tool        string   `json:"tool,omitempty"`
	Differences []string `json:"differences"`
	Diff        string   `json:"diff,omitempty"`
}

// Recorded is a recorded client request: its 1-based interaction.
type Recorded struct {
	Interaction int    `json:"interaction"`
	Method      string `json:"method"`
	Tool        string `json:"tool,omitempty"`
}

// Fault is a scripted fault of a run and how often it fired.
type Fault struct {
	Source string `json:"source"`
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	Fired  int64  `json:"fired"`
}

// The notes that the replayer gives the requests it answers (the live
// log's brackets): "replayed #4", "no match", "scripted: NAME" and
// "scripted: NAME, on the answer of #4".
var (
	replayedNote = regexp.MustCompile(`^replayed #(\d+)$`)
	scriptedNote = regexp.MustCompile(`^scripted: .*?(?:, on the answer of #(\d+))?$`)
)

// outcome sets what the replay made of request m, from its note.
func (b *builder) outcome(m *Message) {
	switch sub := replayedNote.FindStringSubmatch(m.Note); {
	case m.Kind != "request" || m.From != string(cassettes.FromClient):
		if strings.HasPrefix(m.Note, "scripted: ") && m.Kind != "request" && m.Kind != "notification" {
			m.By = "mcpmock"
		}
	case sub != nil:
		m.Answered, _ = strconv.Atoi(sub[1])
		m.Outcome = "matched"
		if b.answered[m.Answered] > 0 {
			m.Outcome = "repeated"
		}
		b.answered[m.Answered]++
	case m.Note == "no match":
		m.Outcome = "missed"
	default:
		if sub := scriptedNote.FindStringSubmatch(m.Note); sub != nil {
			m.Outcome = "scripted"
			if sub[1] != "" {
				m.Answered, _ = strconv.Atoi(sub[1])
			}
		}
	}
}

// note adds a record of the live log that is no message (a warning, the
// explanation of a miss) as a message of mcpmock's lane, about the latest
// message with the record's id when it has one.
func (b *builder) note(text, level, id string, at cassettes.Millis) {
	if b.session < 0 {
		b.newSession(0)
	}
	m := Message{Seq: len(b.doc.Messages), Session: b.session, From: "mcpmock", Kind: "note", Pair: -1, AtMs: float64(at),
		Note: text, Level: level, Summary: short(firstLine(text), 120)}
	if id != "" {
		for i := len(b.doc.Messages) - 1; i >= 0; i-- {
			about := &b.doc.Messages[i]
			if about.ID != id || about.Kind == "note" {
				continue
			}
			// The explanation of a miss belongs to the missed request.
			if about.Kind != "request" && about.Pair >= 0 && b.doc.Messages[about.Pair].Outcome == "missed" {
				about = &b.doc.Messages[about.Pair]
			}
			m.Pair = about.Seq
			if about.Outcome == "missed" && about.Explanation == "" {
				about.Explanation = text
			}
			break
		}
	}
	b.doc.Messages = append(b.doc.Messages, m)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// misses are the missed requests of the live traffic, with the
// candidates that the answer to each carries (its error's data).
func misses(d *Document) []Miss {
	out := []Miss{}
	for _, m := range d.Messages {
		if m.Outcome != "missed" {
			continue
		}
		miss := Miss{Seq: m.Seq, Method: m.Method, Tool: m.Tool, Explanation: m.Explanation, Candidates: []Candidate{}}
		if m.Pair >= 0 {
			answer := d.Messages[m.Pair]
			miss.Message = strings.TrimPrefix(gjson.GetBytes(answer.JSON, "error.message").String(), "mcpmock: ")
			if data := gjson.GetBytes(answer.JSON, "error.data.candidates"); data.IsArray() {
				json.Unmarshal([]byte(data.Raw), &miss.Candidates)
			}
		}
		out = append(out, miss)
	}
	return out
}

// requests are the recorded client requests of c, by interaction.
func requests(c *cassettes.Cassette) map[int]Recorded {
	out := map[int]Recorded{}
	for i, in := range c.Interactions {
		if in.Request == nil || in.From == cassettes.FromServer {
			continue
		}
		r := gjson.ParseBytes(in.Request)
		rec := Recorded{Interaction: i + 1, Method: r.Get("method").String()}
		if name, ok := mcp.ToolName(json.RawMessage(r.Get("params").Raw)); ok && rec.Method == "tools/call" {
			rec.Tool = name
		}
		out[i+1] = rec
	}
	return out
}

// report is what the view reads of a report of mcpmock replay --report or
// mcpmock run --report (docs/cli.md).
type report struct {
	Version   int `json:"version"`
	Cassettes []struct {
		Name   string `json:"name"`
		Path   string `json:"path"`
		Misses []struct {
			Method      string      `json:"method"`
			Tool        string      `json:"tool"`
			Message     string      `json:"message"`
			Explanation string      `json:"explanation"`
			Candidates  []Candidate `json:"candidates"`
		} `json:"misses"`
		Unused []Recorded `json:"unusedInteractions"`
		Faults []Fault    `json:"faults"`
	} `json:"cassettes"`
}

// A Report is a report of a past replay, read by ReadReport.
type Report struct {
	name string
	r    report
}

// ReadReport reads a report written by mcpmock replay --report or mcpmock
// run --report; name names it on the page.
func ReadReport(name string, rd io.Reader) (*Report, error) {
	var r report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("report %s: %w", name, err)
	}
	if len(r.Cassettes) == 0 {
		return nil, fmt.Errorf("report %s: no cassettes in it (is it a report of mcpmock replay or run --report?)", name)
	}
	return &Report{name: name, r: r}, nil
}

// Paths are the paths of the cassettes the report is about, as the run
// named them.
func (rep *Report) Paths() []string {
	out := make([]string, len(rep.r.Cassettes))
	for i, c := range rep.r.Cassettes {
		out[i] = c.Path
	}
	return out
}

// Annotate adds to d what the report says of the cassette at path (a
// cassette of the report is the one with that path, or else the one with
// its file name): the misses as messages of mcpmock's lane at the end, the
// unused interactions, the faults. It reports whether the report names the
// cassette.
func (rep *Report) Annotate(d *Document, path string) bool {
	i := rep.find(path)
	if i < 0 {
		return false
	}
	c := rep.r.Cassettes[i]
	r := &Replay{Report: rep.name, Misses: []Miss{}, Unused: c.Unused, Faults: c.Faults}
	if r.Unused == nil {
		r.Unused = []Recorded{}
	}
	session := max(len(d.Sessions)-1, 0)
	for _, m := range c.Misses {
		miss := Miss{Seq: len(d.Messages), Method: m.Method, Tool: m.Tool, Message: strings.TrimPrefix(m.Message, "mcpmock: "), Explanation: m.Explanation, Candidates: m.Candidates}
		if miss.Candidates == nil {
			miss.Candidates = []Candidate{}
		}
		r.Misses = append(r.Misses, miss)
		d.Messages = append(d.Messages, Message{Seq: miss.Seq, Session: session, From: "mcpmock", Kind: "miss", Method: m.Method, Tool: m.Tool,
			Outcome: "missed", Summary: short(miss.Message, 120), Explanation: m.Explanation, Error: miss.Message, Pair: -1})
	}
	d.Replay = r
	return true
}

// find returns the index of the report's cassette at path: the one whose
// absolute path is path's, or else the only one with its file name; -1
// for none.
func (rep *Report) find(path string) int {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return filepath.Clean(p)
	}
	byName := -1
	for i, c := range rep.r.Cassettes {
		if abs(c.Path) == abs(path) {
			return i
		}
		if filepath.Base(c.Path) == filepath.Base(path) {
			if byName >= 0 {
				byName = -2 // two of that name: neither
			} else if byName == -1 {
				byName = i
			}
		}
	}
	return max(byName, -1)
}
