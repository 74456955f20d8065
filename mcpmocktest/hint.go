package mcpmocktest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpmock/mcpmock/replayer"
)

// hinter words the hint of a miss for the Go test that made the server
// (replayer.Miss.Advice decides; Miss.Hint holds the command line's words):
// a "match" rule or Options.Matcher when ignoring what differs is safe,
// else how to record the call. It travels to Command processes in their
// configuration.
type hinter struct {
	Test     string `json:"test"`               // the top-level test, for go test -run
	File     bool   `json:"file,omitempty"`     // the cassette is a file (NewServer), not built in Go
	Live     bool   `json:"live,omitempty"`     // Options names a live server to record from
	NoGoCode bool   `json:"noGoCode,omitempty"` // a Command process: Options.Matcher cannot apply
	Matcher  bool   `json:"matcher,omitempty"`  // Options.Matcher is set: the rule goes over it
}

func (s *Server) hinter() hinter {
	return hinter{
		Test:    strings.Split(s.t.Name(), "/")[0],
		File:    s.path != "",
		Live:    len(s.opts.Upstream) > 0 || s.opts.UpstreamURL != "",
		Matcher: s.opts.Matcher != nil,
	}
}

// report is the miss's explanation (replayer.Miss.Report) with the hint
// for a Go test.
func (h hinter) report(m *replayer.Miss) string {
	g := *m
	g.Hint = h.hint(m)
	return g.Report()
}

// hint words what would make the request match. A miss with no closest
// candidate (the method never recorded, every match used up) keeps its
// hint: the message says what happened.
func (h hinter) hint(m *replayer.Miss) string {
	if len(m.Candidates) == 0 {
		return m.Hint
	}
	a := m.Advice()
	if len(a.Ignore) > 0 {
		rule, _ := json.Marshal(map[string][]string{"ignore": a.Ignore})
		var ways []string
		if h.File {
			ways = append(ways, fmt.Sprintf(`"match": %s in the cassette`, rule))
		}
		if !h.NoGoCode {
			quoted := make([]string, len(a.Ignore))
			for i, p := range a.Ignore {
				quoted[i] = strconv.Quote(p)
			}
			base := "nil"
			if h.Matcher {
				base = "Options.Matcher"
			}
			ways = append(ways, fmt.Sprintf("Options.Matcher: matcher.WithConfig(%s, &matcher.Config{Ignore: []string{%s}})", base, strings.Join(quoted, ", ")))
		}
		return fmt.Sprintf("to accept this, ignore %s: %s; if the call is new, %s", strings.Join(a.Ignore, ", "), strings.Join(ways, ", or "), h.record())
	}
	why := ""
	if len(a.Apart) > 0 {
		why = fmt.Sprintf(": %s tells the recorded calls apart, so ignoring it would answer with another call's answer", strings.Join(a.Apart, ", "))
	}
	return fmt.Sprintf("this call was not recorded%s; %s", why, h.record())
}

// record says how to add a call to the cassette.
func (h hinter) record() string {
	run := fmt.Sprintf("go test -run '^%s$'", h.Test)
	switch {
	case !h.File:
		return "add it to the cassette (CassetteBuilder.Call) or script it (Options.Stubs)"
	case !h.Live:
		return fmt.Sprintf("record it: name the live server in Options.Upstream or Options.UpstreamURL, then MCPMOCK_RECORD=new-episodes %s appends it to the cassette", run)
	}
	return fmt.Sprintf("record it: MCPMOCK_RECORD=new-episodes %s appends it to the cassette, MCPMOCK_RECORD=1 %s records the cassette again", run, run)
}
