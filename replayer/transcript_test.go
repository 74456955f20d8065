package replayer_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestTranscripts replays the conversations of testdata/transcripts/*.txtar
// on every front end: stdio (Engine.Serve over OS pipes), Streamable HTTP
// (Engine.Handler on loopback) and in-memory (mcpmocktest's Server.Conn),
// each a subtest, so that the three telling the same conversation is itself
// a test.
//
// A transcript is a txtar file:
//
//	The comment: in prose, what the conversation shows.
//	transports: stdio in-memory
//	skip http: issue 19 item 3: the notification comes after the response
//	-- cassette.json --
//	{"version": 1, "interactions": [...]}
//	-- transcript --
//	# the client asks, the server answers
//	> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{...}}
//	< {"jsonrpc":"2.0","id":1,"result":{...}}
//
// Lines of the comment that start so are directives: "transports:" names
// the front ends the file runs on (default: all three), "skip NAME: why"
// skips one of them with why (a known bug, named), and "options: strict"
// replays with replayer.Options.Strict. Faults are scripted in the
// cassette itself (an interaction with "when" or "fault").
//
// The transcript has one message a line: "> " then what the client sends,
// "< " then what the server must send, "<~ " then a part of what the
// server must send (an object needs only the members written, at every
// depth: for a message whose other members are not stable, such as the
// diff in a miss's data); lines starting with # and blank lines are for
// the reader. A server line is compared with what came as a JSON value:
// the order of members, spacing and the spelling of numbers (1.0, 1) do
// not matter, nor the order of the responses in a batch answer (JSON-RPC
// 2.0 leaves it free). Over HTTP, what the server sends is the JSON body of a POST's
// answer (whatever its status), the data of each event of a POST's event
// stream and of the GET stream; an event without data (a priming event, a
// keep-alive) is none, and data that is not JSON fails.
//
// Ids the replay makes up (a server-to-client request's id is fresh, not the
// recorded one) are named: a string "$name" in a server line matches
// whatever value the server sent there, and names it; later lines, the
// client's in particular, say "$name" for that value:
//
//	< {"jsonrpc":"2.0","id":"$roots","method":"roots/list"}
//	> {"jsonrpc":"2.0","id":"$roots","result":{"roots":[]}}
//
// Two names never stand for the same value (so two server requests recorded
// under one id must come under two), and "$$" writes a literal string that
// starts with "$".
//
// Order. The server lines between two client lines are a block. Before it
// sends a client line, the harness waits until every server line of the
// block before it has come, and fails when one does not come within
// lineWait (naming the file, the line and the front end). On stdio and
// in-memory the server's messages come on one stream, in the order of the
// transcript. Over HTTP they come on several (the answer to each POST, and
// the GET stream opened right after initialize): the transcript's order
// holds within each stream, and the messages of one block may interleave
// across streams. A message that no line of the current block expects
// fails at once; so do messages that have come when a block is complete
// (checked before the next client line goes out, without waiting), and
// those that come after the last line, until the client hangs up (closes
// its input; over HTTP, once every POST is answered, DELETEs the session)
// and every stream has ended. Over HTTP a client line goes out once the
// server has sent the headers of the answer to the one before.
//
// go test ./replayer -run TestTranscripts -update rewrites the server
// lines of each file from what the replay sent on its first front end
// other than HTTP (whose streams do not give one order), or HTTP for a
// file of HTTP only; a file whose front end is skipped for a bug is left
// as it is. Client lines, comments and order stay; a placeholder stays
// where the old line had one, and a "<~" line keeps only its members. To
// catch what comes without a line waiting for it, -update waits after each
// client line until the replay has been quiet for updateQuiet, so it is
// for writing transcripts, not a test; read the diff before committing it.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/transcripts")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			t.Parallel()
			tr, err := loadTranscript(path)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				tr.update(t)
				return
			}
			for _, transport := range tr.transports {
				t.Run(transport, func(t *testing.T) {
					if why := tr.skips[transport]; why != "" {
						t.Skipf("%s: %s", tr.path, why)
					}
					tr.replay(t, transport, nil)
				})
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite the server lines of testdata/transcripts from what the replay sent")

const (
	// lineWait bounds the wait for one server line (and for the streams to
	// end after the last).
	lineWait = 10 * time.Second
	// updateQuiet is how long -update waits for more after each client
	// line.
	updateQuiet = 300 * time.Millisecond
)

// transcript is one loaded file.
type transcript struct {
	path       string
	file       txtar
	section    int // index of the transcript section in file.sections
	cassette   *cassettes.Cassette
	transports []string
	skips      map[string]string // transport → why
	strict     bool              // "options: strict": replayer.Options.Strict
	steps      []step
	wait       time.Duration // bounds the wait for a line; 0 means lineWait
}

func (tr *transcript) lineWait() time.Duration {
	if tr.wait > 0 {
		return tr.wait
	}
	return lineWait
}

// step is one message line of a transcript.
type step struct {
	line   int    // in the file, 1-based
	index  int    // in the transcript section, 0-based
	client bool   // ">"; else a server line
	subset bool   // "<~"
	text   string // the JSON as written
	value  any
}

func (s step) String() string {
	switch {
	case s.client:
		return fmt.Sprintf("line %d: > %s", s.line, s.text)
	case s.subset:
		return fmt.Sprintf("line %d: <~ %s", s.line, s.text)
	}
	return fmt.Sprintf("line %d: < %s", s.line, s.text)
}

func loadTranscript(path string) (*transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseTranscript(path, data)
}

func parseTranscript(path string, data []byte) (*transcript, error) {
	var err error
	tr := &transcript{path: path, file: parseTxtar(data), section: -1, transports: transcriptTransports, skips: map[string]string{}}
	for _, line := range strings.Split(string(tr.file.comment), "\n") {
		if list, ok := strings.CutPrefix(line, "transports:"); ok {
			tr.transports = strings.Fields(list)
			for _, name := range tr.transports {
				if !slices.Contains(transcriptTransports, name) {
					return nil, fmt.Errorf("%s: transports: unknown %q (want some of %v)", path, name, transcriptTransports)
				}
			}
		}
		if list, ok := strings.CutPrefix(line, "options:"); ok {
			for _, o := range strings.Fields(list) {
				if o != "strict" {
					return nil, fmt.Errorf("%s: options: unknown %q (want strict)", path, o)
				}
				tr.strict = true
			}
		}
		if rest, ok := strings.CutPrefix(line, "skip "); ok {
			name, why, ok := strings.Cut(rest, ":")
			if !ok || !slices.Contains(transcriptTransports, name) || strings.TrimSpace(why) == "" {
				return nil, fmt.Errorf("%s: %q: want \"skip TRANSPORT: why\" with TRANSPORT one of %v", path, line, transcriptTransports)
			}
			tr.skips[name] = strings.TrimSpace(why)
		}
	}
	for i, sec := range tr.file.sections {
		switch sec.name {
		case "cassette.json":
			if tr.cassette, err = cassettes.Parse(path+": cassette.json", sec.data); err != nil {
				return nil, err
			}
		case "transcript":
			tr.section = i
			if err := tr.parseSteps(sec); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s:%d: unknown section %q (want cassette.json and transcript)", path, sec.line-1, sec.name)
		}
	}
	if tr.cassette == nil || tr.section < 0 {
		return nil, fmt.Errorf("%s: want a cassette.json section and a transcript section", path)
	}
	return tr, nil
}

func (tr *transcript) parseSteps(sec txtarSection) error {
	for i, line := range strings.Split(strings.TrimSuffix(string(sec.data), "\n"), "\n") {
		s := step{line: sec.line + i, index: i}
		var text string
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "> "):
			s.client, text = true, line[2:]
		case strings.HasPrefix(line, "<~ "):
			s.subset, text = true, line[3:]
		case strings.HasPrefix(line, "< "):
			text = line[2:]
		default:
			return fmt.Errorf("%s:%d: %q: want \"> \" (client), \"< \" or \"<~ \" (server), # or a blank line", tr.path, s.line, line)
		}
		s.text = strings.TrimSpace(text)
		v, err := decodeJSON([]byte(s.text))
		if err != nil {
			return fmt.Errorf("%s:%d: not JSON: %v", tr.path, s.line, err)
		}
		s.value = v
		tr.steps = append(tr.steps, s)
	}
	if len(tr.steps) == 0 {
		return fmt.Errorf("%s: the transcript has no lines", tr.path)
	}
	return nil
}

// blocks splits the steps into runs of server lines, each followed by the
// client line that goes out once they have come (nil after the last).
func (tr *transcript) blocks() (expect [][]step, then []*step) {
	var cur []step
	for i := range tr.steps {
		s := &tr.steps[i]
		if !s.client {
			cur = append(cur, *s)
			continue
		}
		expect, then = append(expect, cur), append(then, s)
		cur = nil
	}
	return append(expect, cur), append(then, nil)
}

// replay runs the transcript on one front end. With got set (-update) it
// does not compare: it collects what came in each block.
func (tr *transcript) replay(t testing.TB, transport string, got *[][]arrival) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	where := func(line int) string { return fmt.Sprintf("%s:%d: %s", tr.path, line, transport) }
	box := newInbox()
	conn := dial(t, transport, tr.cassette, tr.strict, box)
	b := bindings{}
	expect, then := tr.blocks()
	last := 0
	for k := range expect {
		if got != nil {
			*got = append(*got, collect(t, ctx, box, expect[k], b))
		} else {
			tr.await(t, ctx, box, transport, expect[k], b, last)
		}
		if len(expect[k]) > 0 {
			last = expect[k][len(expect[k])-1].line
		}
		s := then[k]
		if s == nil {
			break
		}
		if got == nil {
			tr.noExtra(t, box, transport, last, "before the next client line")
		}
		v, err := substitute(s.value, b)
		if err != nil {
			t.Fatalf("%s: %v", where(s.line), err)
		}
		lctx, lcancel := context.WithTimeout(ctx, tr.lineWait())
		err = conn.send(lctx, s.line, []byte(encodeJSON(v)))
		lcancel()
		if err != nil {
			t.Fatalf("%s: sending the client line: %v", where(s.line), err)
		}
		last = s.line
	}
	hctx, hcancel := context.WithTimeout(ctx, tr.lineWait())
	defer hcancel()
	if err := conn.hangUp(hctx); err != nil {
		t.Errorf("%s: hanging up after the last line: %v", where(last), err)
	}
	if got != nil {
		k := len(*got) - 1
		for a, ok, _ := box.poll(); ok; a, ok, _ = box.poll() {
			(*got)[k] = append((*got)[k], a)
		}
		return
	}
	tr.noExtra(t, box, transport, last, "after the last line")
}

// await waits for the server lines of one block. after is the line the
// block follows, for messages.
func (tr *transcript) await(t testing.TB, ctx context.Context, box *inbox, transport string, block []step, b bindings, after int) {
	t.Helper()
	oneStream := transport != "http"
	matched := make([]bool, len(block))
	done := 0
	lastOn := map[string]int{} // stream → index in block of its last message, +1
	for done < len(block) {
		lctx, cancel := context.WithTimeout(ctx, tr.lineWait())
		a, err := box.next(lctx)
		cancel()
		if err != nil {
			var missing []string
			for i, s := range block {
				if !matched[i] {
					missing = append(missing, "\t"+s.String())
				}
			}
			first := slices.Index(matched, false)
			t.Fatalf("%s:%d: %s: the server did not send what the transcript expects (%v); still expected:\n%s",
				tr.path, block[first].line, transport, err, strings.Join(missing, "\n"))
		}
		got, err := decodeJSON(a.data)
		if err != nil {
			t.Fatalf("%s: %s: after line %d the server sent on %s what is not JSON (%v): %q", tr.path, transport, after, a.stream, err, a.data)
		}
		// On one stream the next line must match; over HTTP, the next
		// line of this stream may be a later one (the lines before it
		// come on other streams).
		hit, from := -1, lastOn[a.stream]
		for i := from; i < len(block) && hit < 0; i++ {
			if matched[i] {
				continue
			}
			try := b.clone()
			if matchLine(block[i].value, got, block[i].subset, try) {
				hit = i
				for k, v := range try {
					b[k] = v
				}
			}
			if oneStream {
				break
			}
		}
		if hit < 0 {
			want := block[slices.Index(matched, false)]
			for i := from; i < len(block); i++ {
				if !matched[i] {
					want = block[i]
					break
				}
			}
			wv, err := substitute(want.value, b)
			if err != nil {
				wv = want.value
			}
			t.Fatalf("%s:%d: %s: the server sent on %s a message the transcript does not expect here:\n\t%s\nwhere it expects\n\t%s\n(-want +got):\n%s",
				tr.path, want.line, transport, a.stream, bytes.TrimSpace(a.data), want, cmp.Diff(plain(wv), plain(got)))
		}
		matched[hit] = true
		lastOn[a.stream] = hit + 1
		done++
		after = block[hit].line
	}
}

// noExtra fails when the server sent something no line expects.
func (tr *transcript) noExtra(t testing.TB, box *inbox, transport string, after int, when string) {
	t.Helper()
	a, ok, err := box.poll()
	if err != nil {
		t.Fatalf("%s:%d: %s: %v", tr.path, after, transport, err)
	}
	if ok {
		t.Fatalf("%s:%d: %s: %s, the server sent on %s a message that no line expects:\n\t%s", tr.path, after, transport, when, a.stream, bytes.TrimSpace(a.data))
	}
}

// collect is await for -update: what came for one block, binding the
// placeholders of its old lines, once as many messages as it had have come
// (or lineWait has passed) and the replay has been quiet for updateQuiet.
func collect(t testing.TB, ctx context.Context, box *inbox, block []step, b bindings) []arrival {
	t.Helper()
	var got []arrival
	wait := lineWait
	for {
		if len(got) >= len(block) {
			wait = updateQuiet
		}
		lctx, cancel := context.WithTimeout(ctx, wait)
		a, err := box.next(lctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				t.Fatal(err)
			}
			return got
		}
		if i := len(got); i < len(block) {
			if v, err := decodeJSON(a.data); err == nil {
				restoreLine(block[i].value, v, block[i].subset, b)
			}
		}
		got = append(got, a)
	}
}

// update rewrites the file's server lines from a replay.
func (tr *transcript) update(t testing.TB) {
	// One stream gives the order of the transcript; the streams of HTTP
	// only their own. A known bug's skip leaves the file alone.
	transport := ""
	for _, name := range tr.transports {
		if name == "http" && len(tr.transports) > 1 {
			continue
		}
		if why := tr.skips[name]; why != "" {
			t.Logf("%s: not updated: %s skipped: %s", tr.path, name, why)
			return
		}
		transport = name
		break
	}
	var got [][]arrival
	tr.replay(t, transport, &got)
	expect, _ := tr.blocks()
	b := bindings{}
	lines := make([][]string, len(expect))
	for k := range expect {
		for i, a := range got[k] {
			v, err := decodeJSON(a.data)
			if err != nil {
				lines[k] = append(lines[k], "# not JSON: "+string(bytes.TrimSpace(a.data)))
				continue
			}
			prefix := "< "
			if i < len(expect[k]) {
				old := expect[k][i]
				v = restoreLine(old.value, v, old.subset, b)
				if old.subset {
					prefix = "<~ "
				}
			}
			lines[k] = append(lines[k], prefix+encodeJSON(v))
		}
	}
	sec := &tr.file.sections[tr.section]
	sec.data = []byte(rewriteServerLines(string(sec.data), tr.steps, lines))
	if err := os.WriteFile(tr.path, tr.file.format(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rewriteServerLines puts the server lines of each block in place of the
// old ones: the i-th new line of a block where its i-th old line was, more
// after its last old line (or after the client line it follows).
func rewriteServerLines(text string, steps []step, blocks [][]string) string {
	old := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	type pos struct{ block, nth int }
	server := map[int]pos{} // line index → its place
	anchor := make([]int, len(blocks))
	k, nth := 0, 0
	anchor[0] = -1
	for _, s := range steps {
		if s.client {
			k, nth = k+1, 0
			anchor[k] = s.index
			continue
		}
		server[s.index] = pos{k, nth}
		anchor[k] = s.index
		nth++
	}
	var out []string
	flush := func(k int, from int) {
		out = append(out, blocks[k][min(from, len(blocks[k])):]...)
	}
	counts := make([]int, len(blocks)) // old server lines of each block
	for _, p := range server {
		counts[p.block]++
	}
	if anchor[0] < 0 {
		flush(0, counts[0])
	}
	for i, line := range old {
		if p, ok := server[i]; ok {
			if p.nth < len(blocks[p.block]) {
				out = append(out, blocks[p.block][p.nth])
			}
		} else {
			out = append(out, line)
		}
		for k := range blocks {
			if anchor[k] == i {
				flush(k, counts[k])
			}
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// txtar is a txtar archive (golang.org/x/tools/txtar): a comment, then
// files, each after a line "-- NAME --". Its few lines are here rather than
// a new dependency.
type txtar struct {
	comment  []byte
	sections []txtarSection
}

type txtarSection struct {
	name string
	line int // of the first line of data, 1-based
	data []byte
}

func parseTxtar(data []byte) txtar {
	var a txtar
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if name, ok := txtarMarker(line); ok {
			a.sections = append(a.sections, txtarSection{name: name, line: n + 1})
			continue
		}
		if len(a.sections) == 0 {
			a.comment = append(append(a.comment, line...), '\n')
			continue
		}
		s := &a.sections[len(a.sections)-1]
		s.data = append(append(s.data, line...), '\n')
	}
	return a
}

func txtarMarker(line []byte) (string, bool) {
	s := string(line)
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

func (a txtar) format() []byte {
	var b bytes.Buffer
	b.Write(a.comment)
	for _, s := range a.sections {
		fmt.Fprintf(&b, "-- %s --\n", s.name)
		b.Write(s.data)
		if len(s.data) > 0 && s.data[len(s.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
