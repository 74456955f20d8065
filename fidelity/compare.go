package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// A stepOutput is one line of client.mjs, normalized: the step's name, its
// result and the messages the server sent on its own during it, each as
// canonical JSON (object members sorted). A message the client had already
// seen in an earlier step (marked "resent": a resumed SSE stream's echo) is
// not in Server but counted in Resent.
type stepOutput struct {
	Step   string
	Result string
	Server []string
	Resent int
}

// readSteps reads and normalizes the lines client.mjs wrote to path.
func readSteps(path string) ([]stepOutput, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSteps(f, path)
}

func parseSteps(r io.Reader, name string) ([]stepOutput, error) {
	var out []stepOutput
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var line struct {
			Step   string            `json:"step"`
			Result json.RawMessage   `json:"result"`
			Server []json.RawMessage `json:"server"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("%s:%d: not a line of client.mjs: %w", name, n, err)
		}
		// Ids are numbered per step, server messages first: the
		// same id in a request and in the answer that quotes it gets the
		// same number, and a missing message shifts only its own step.
		s := stepOutput{Step: line.Step}
		nz := normalizer{ids: map[string]string{}}
		for _, m := range line.Server {
			var mark struct{ Resent bool }
			if json.Unmarshal(m, &mark) == nil && mark.Resent {
				s.Resent++
				continue
			}
			nm, err := nz.normalize(m)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			s.Server = append(s.Server, nm)
		}
		var err error
		if s.Result, err = nz.normalize(line.Result); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// Values that server-everything makes up anew on each run.
var (
	// "for session undefined" over stdio, "for session UUID" over HTTP (a
	// cassette recorded on one transport and replayed on the other keeps
	// the recorded text): <session>.
	sessionText = regexp.MustCompile(`(?i)\b(session(?:id)?) (?:undefined|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b`)
	// URL elicitation ids the server makes up (UUIDs) and task ids
	// (InMemoryTaskStore: 16 random bytes in hex): <id1>, <id2>… in the
	// order they first appear in the step, so that a replay may give a
	// server-made id a fresh value, but only consistently.
	randomID = regexp.MustCompile(`\b(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-f]{32})\b`)
	// Task createdAt and lastUpdatedAt: <timestamp>.
	timestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
	// "created at 9:08:11 PM" in dynamic resources (toLocaleTimeString): <time>.
	timeOfDay = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?`)
	// The text of toggle-simulated-logging's messages, whose level the
	// server picks at random: level <random>, data <simulated log message>.
	simulatedLog = regexp.MustCompile(`^(Debug|Info|Notice|Warning|Error|Critical|Alert|Emergency)[- ]level[- ]message`)
)

// A normalizer normalizes the values of one step.
type normalizer struct {
	ids map[string]string // a random id → its placeholder
}

// normalize returns raw as canonical JSON (object members sorted) with the
// values that differ from run to run replaced (see above), a base64 "blob"
// that decodes to text with such values replaced by the normalized text.
func (nz *normalizer) normalize(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "null", nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if m, ok := v.(map[string]any); ok && m["notification"] == "notifications/message" {
		if p, ok := m["params"].(map[string]any); ok {
			if s, ok := p["data"].(string); ok && simulatedLog.MatchString(s) {
				p["level"], p["data"] = "<random>", "<simulated log message>"
			}
		}
	}
	v = nz.walk(v, "")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// walk visits object members in the order of their names, so that ids are
// numbered the same way in every run.
func (nz *normalizer) walk(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x[k] = nz.walk(x[k], k)
		}
	case []any:
		for i, e := range x {
			x[i] = nz.walk(e, "")
		}
	case string:
		if key == "blob" {
			if text, err := base64.StdEncoding.DecodeString(x); err == nil && utf8.Valid(text) {
				if n := nz.text(string(text)); n != string(text) {
					return "<base64 of: " + n + ">"
				}
			}
		}
		return nz.text(x)
	}
	return v
}

func (nz *normalizer) text(s string) string {
	s = sessionText.ReplaceAllString(s, "$1 <session>")
	s = randomID.ReplaceAllStringFunc(s, func(id string) string {
		p, ok := nz.ids[id]
		if !ok {
			p = fmt.Sprintf("<id%d>", len(nz.ids)+1)
			nz.ids[id] = p
		}
		return p
	})
	s = timestamp.ReplaceAllString(s, "<timestamp>")
	return timeOfDay.ReplaceAllString(s, "<time>")
}

// legs are the table's columns after live.
var legs = []string{"tap", "replay", "cross"}

// A report is the comparison of one transport's legs with live.
type report struct {
	transport string
	steps     []string                       // every step name, live's order first
	live      map[string]*stepOutput         // this transport's live run
	cells     map[string]map[string]string   // leg → step → "=" or a marker
	details   map[string]map[string][]string // leg → step → what differs
	ran       map[string]bool                // the legs that ran
	resent    map[string]int                 // leg → messages marked resent
}

// compare compares the tap and replay legs of transport t with its live
// leg, and the cross leg (which replays the cassette of the other
// transport) with otherLive, that transport's live run.
func compare(t string, outputs map[string][]stepOutput, otherLive []stepOutput) *report {
	r := &report{transport: t, live: index(outputs["live"]), cells: map[string]map[string]string{},
		details: map[string]map[string][]string{}, ran: map[string]bool{}, resent: map[string]int{}}
	for leg, steps := range outputs {
		for _, st := range steps {
			r.resent[leg] += st.Resent
		}
	}
	seen := map[string]bool{}
	add := func(steps []stepOutput) {
		for _, s := range steps {
			if !seen[s.Step] {
				seen[s.Step] = true
				r.steps = append(r.steps, s.Step)
			}
		}
	}
	add(outputs["live"])
	for _, leg := range legs {
		add(outputs[leg])
	}
	for _, leg := range legs {
		got, ok := outputs[leg]
		if !ok {
			continue
		}
		r.ran[leg] = true
		want := r.live
		if leg == "cross" {
			want = index(otherLive)
		}
		gotBy := index(got)
		r.cells[leg], r.details[leg] = map[string]string{}, map[string][]string{}
		for _, name := range r.steps {
			w, g := want[name], gotBy[name]
			switch {
			case w == nil && g == nil:
				r.cells[leg][name] = "not run"
			case w == nil:
				r.cells[leg][name] = "extra"
				r.details[leg][name] = []string{"not in the live run"}
			case g == nil:
				r.cells[leg][name] = "missing"
				r.details[leg][name] = []string{"the client did not get this far (see the leg's .log)"}
			default:
				r.cells[leg][name], r.details[leg][name] = diffStep(w, g)
			}
		}
	}
	return r
}

func index(steps []stepOutput) map[string]*stepOutput {
	m := map[string]*stepOutput{}
	for i := range steps {
		m[steps[i].Step] = &steps[i]
	}
	return m
}

// diffStep returns "=" when got equals want, else a short marker (result,
// msgs GOT/WANT, order, when) and the details.
func diffStep(want, got *stepOutput) (string, []string) {
	var marks, details []string
	if want.Result != got.Result {
		marks = append(marks, "result")
		path, w, g := firstDiff(want.Result, got.Result)
		details = append(details, fmt.Sprintf("result at %s: want %s, got %s", path, clip(w), clip(g)))
	}
	wm, gm := stripWhen(want.Server), stripWhen(got.Server)
	switch {
	case !sameMultiset(wm, gm):
		marks = append(marks, fmt.Sprintf("msgs %d/%d", len(gm), len(wm)))
		missing, extra := multisetDiff(wm, gm)
		for _, m := range missing {
			details = append(details, "server message missing: "+clip(m))
		}
		for _, m := range extra {
			details = append(details, "server message not in live: "+clip(m))
		}
	case !equal(wm, gm):
		marks = append(marks, "order")
		details = append(details, "server messages in another order: want "+methods(want.Server)+", got "+methods(got.Server))
	case !equal(want.Server, got.Server):
		marks = append(marks, "when")
		for i := range want.Server {
			if want.Server[i] != got.Server[i] {
				details = append(details, fmt.Sprintf("server message %d (%s): live %s the answer, here %s it",
					i+1, method(wm[i]), beforeAfter(want.Server[i]), beforeAfter(got.Server[i])))
			}
		}
	}
	if len(marks) == 0 {
		return "=", nil
	}
	return strings.Join(marks, "+"), details
}

// stripWhen returns the messages without their "before" member.
func stripWhen(ms []string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = strings.Replace(m, `,"before":true`, "", 1)
		out[i] = strings.Replace(out[i], `"before":true,`, "", 1)
	}
	return out
}

func beforeAfter(m string) string {
	if strings.Contains(m, `"before":true`) {
		return "before"
	}
	return "after"
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sameMultiset(a, b []string) bool {
	missing, extra := multisetDiff(a, b)
	return len(missing) == 0 && len(extra) == 0
}

// multisetDiff returns the members of want not in got and those of got not
// in want, counting repeats.
func multisetDiff(want, got []string) (missing, extra []string) {
	count := map[string]int{}
	for _, m := range got {
		count[m]++
	}
	for _, m := range want {
		if count[m] > 0 {
			count[m]--
		} else {
			missing = append(missing, m)
		}
	}
	for _, m := range got {
		if count[m] > 0 {
			count[m]--
			extra = append(extra, m)
		}
	}
	return missing, extra
}

// method returns the method of a server message line.
func method(m string) string {
	var v struct{ Notification, Request string }
	json.Unmarshal([]byte(m), &v)
	if v.Request != "" {
		return v.Request
	}
	return v.Notification
}

// methods lists the methods of server message lines, those that came before
// the answer first: "[a b | c]" (a and b before, c after).
func methods(ms []string) string {
	var before, after []string
	for _, m := range ms {
		if beforeAfter(m) == "before" {
			before = append(before, method(m))
		} else {
			after = append(after, method(m))
		}
	}
	out := strings.Join(before, " ")
	if len(after) > 0 {
		out += " | " + strings.Join(after, " ")
	}
	return "[" + strings.TrimSpace(out) + "]"
}

// firstDiff returns the path of the first place where two JSON values
// differ, and the values there.
func firstDiff(a, b string) (string, string, string) {
	var va, vb any
	json.Unmarshal([]byte(a), &va)
	json.Unmarshal([]byte(b), &vb)
	return diffAt("$", va, vb)
}

func diffAt(path string, a, b any) (string, string, string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			xv, xok := x[k]
			yv, yok := y[k]
			if !xok || !yok {
				return path + "." + k, show(xv, xok), show(yv, yok)
			}
			if compact(xv) != compact(yv) {
				return diffAt(path+"."+k, xv, yv)
			}
		}
		return path, compact(a), compact(b)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		for i := range x {
			if compact(x[i]) != compact(y[i]) {
				return diffAt(fmt.Sprintf("%s[%d]", path, i), x[i], y[i])
			}
		}
	}
	return path, compact(a), compact(b)
}

func show(v any, present bool) string {
	if !present {
		return "(absent)"
	}
	return compact(v)
}

func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// clip shortens s to at most 240 bytes.
func clip(s string) string {
	const max = 240
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…(%d bytes)", len(s))
}

// print writes the table, the totals and the details of each difference.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "== %s ==\n", r.transport)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "step\tlive\t%s\n", strings.Join(legs, "\t"))
	for _, name := range r.steps {
		row := []string{name, liveCell(r.live[name])}
		for _, leg := range legs {
			c := "not run"
			if r.ran[leg] {
				c = r.cells[leg][name]
			}
			row = append(row, c)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	row := []string{"identical", fmt.Sprintf("%d steps", len(r.live))}
	for _, leg := range legs {
		if !r.ran[leg] {
			row = append(row, "not run")
			continue
		}
		same := 0
		for _, name := range r.steps {
			if r.cells[leg][name] == "=" {
				same++
			}
		}
		row = append(row, fmt.Sprintf("%d/%d", same, len(r.steps)))
	}
	fmt.Fprintln(tw, strings.Join(row, "\t"))
	if len(r.resent) > 0 {
		row = []string{"re-sent, not compared", fmt.Sprint(r.resent["live"])}
		for _, leg := range legs {
			row = append(row, fmt.Sprint(r.resent[leg]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, leg := range legs {
		for _, name := range r.steps {
			for _, d := range r.details[leg][name] {
				fmt.Fprintf(w, "%s %s: %s: %s\n", r.transport, leg, name, d)
			}
		}
	}
	if r.transport == "http" && r.differs("tap") && !r.tapDiffers() {
		fmt.Fprintln(w, `http tap: "when" only: the GET stream and a POST stream passed each other in the tap, which the transport allows; not a failure`)
	}
}

// liveCell says whether the live step answered or failed.
func liveCell(s *stepOutput) string {
	switch {
	case s == nil:
		return "not run"
	case strings.HasPrefix(s.Result, `{"error":`):
		return "error"
	case strings.Contains(s.Result, `"isError":true`):
		return "tool error"
	}
	return "ok"
}

// tapDiffers reports whether the tap differs from live in a way that fails
// the run. Over Streamable HTTP, a message on the GET stream and an answer on
// a POST stream travel on two connections, which the tap relays each on its
// own: that the answer passes the message there ("when" alone) is a race the
// transport allows, printed but not failing.
func (r *report) tapDiffers() bool {
	for _, c := range r.cells["tap"] {
		if c != "=" && c != "not run" && !(r.transport == "http" && c == "when") {
			return true
		}
	}
	return false
}

// replayDiffers reports whether the replay or cross leg differs from live.
func (r *report) replayDiffers() bool { return r.differs("replay") || r.differs("cross") }

func (r *report) differs(leg string) bool {
	for _, c := range r.cells[leg] {
		if c != "=" && c != "not run" {
			return true
		}
	}
	return false
}
