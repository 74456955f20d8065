package testpeer

import (
	"context"
	"encoding/json"
	"fmt"
	protocol "github.com/mcpmock/mcpmock/internal/mcp"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EverythingOptions configure [RunEverything]. The zero value is a client
// with two roots.
type EverythingOptions struct {
	// Roots is how many roots the client has before it changes them; 0
	// means 2. After the change it has one more.
	Roots int
	// Wait bounds each wait for what the server sends on its own (the
	// effects of notifications/initialized and of
	// notifications/roots/list_changed); 0 means 10 seconds.
	Wait time.Duration
}

// Wire is what a client's transport carried, one line a JSON-RPC message in
// the order the client sent or received them: "> " for the client's, "< "
// for the server's, then the method ("result METHOD" for a response, with
// the method of the request it answers) and what the message says that
// does not depend on a run (ids and progress tokens left out).
type Wire []string

// Index is the position of the first line from `from` on that starts with
// prefix, or -1.
func (w Wire) Index(from int, prefix string) int {
	for i := max(from, 0); i < len(w); i++ {
		if strings.HasPrefix(w[i], prefix) {
			return i
		}
	}
	return -1
}

func (w Wire) String() string { return strings.Join(w, "\n") }

// RunEverything connects a go-sdk client with roots to a server-everything
// look-alike (or a replay of one) over r (server to client) and w (client
// to server), newline-delimited JSON-RPC as on stdio, in the stateful protocol era
// (2025-11-25), and runs its script: it waits for the effects of
// notifications/initialized (the log of its roots), subscribes to
// [EverythingResourceURI], adds a root and waits for the log of the new
// count, calls touch, then long_operation with three steps, and closes.
// It returns what its transport carried, also when a step fails.
func RunEverything(ctx context.Context, r io.ReadCloser, w io.WriteCloser, opts EverythingOptions) (Wire, error) {
	return runEverything(ctx, opts, func(l *wireLog) mcp.Transport {
		return &mcp.IOTransport{Reader: &wiredReader{r: r, w: l}, Writer: wiredWriter{w, l}}
	})
}

// RunEverythingHTTP is [RunEverything] over Streamable HTTP at url. It
// uses connections of its own and closes them when it is done.
func RunEverythingHTTP(ctx context.Context, url string, opts EverythingOptions) (Wire, error) {
	// A connection that the client dialled but never used (a dial that
	// lost the race for a request) would hold up the server's
	// http.Server.Shutdown for 5 seconds.
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	return runEverything(ctx, opts, func(l *wireLog) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: wiredRoundTripper{base, l}}}
	})
}

// withDefaults is o with its zero fields set to their defaults.
func (o EverythingOptions) withDefaults() EverythingOptions {
	if o.Roots == 0 {
		o.Roots = 2
	}
	if o.Wait == 0 {
		o.Wait = 10 * time.Second
	}
	return o
}

// everythingClientName is the clientInfo name of the everything script's
// clients, both libraries.
const everythingClientName = "testpeer-everything-client"

func runEverything(ctx context.Context, opts EverythingOptions, transport func(*wireLog) mcp.Transport) (Wire, error) {
	opts = opts.withDefaults()
	w := &wireLog{}
	client := mcp.NewClient(&mcp.Implementation{Name: everythingClientName, Version: "1.0.0"}, nil)
	for i := range opts.Roots {
		client.AddRoots(root(i))
	}
	cs, err := client.Connect(ctx, transport(w), &mcp.ClientSessionOptions{ProtocolVersion: protocol.Version20251125})
	if err != nil {
		return w.lines(), fmt.Errorf("go-sdk client: connect: %w", err)
	}
	defer cs.Close()
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("go-sdk client: %s: %w", what, err)
		}
		return nil
	}
	// The logs of the roots: as many as the client changed them, whatever
	// count they state (a replay states the recorded one).
	if err := step("effects of initialized", w.await(ctx, opts.Wait, rootsLog, 1)); err != nil {
		return w.lines(), err
	}
	if err := step("subscribe", cs.Subscribe(ctx, &mcp.SubscribeParams{URI: EverythingResourceURI})); err != nil {
		return w.lines(), err
	}
	client.AddRoots(root(opts.Roots))
	if err := step("effects of roots/list_changed", w.await(ctx, opts.Wait, rootsLog, 2)); err != nil {
		return w.lines(), err
	}
	// Over HTTP, a call's notifications may come on another stream than
	// its result, and after it: wait for them too.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolTouch}); err != nil {
		return w.lines(), step("tools/call touch", err)
	}
	if err := step("resources/updated of touch", w.await(ctx, opts.Wait, touchedLine, 1)); err != nil {
		return w.lines(), err
	}
	params := &mcp.CallToolParams{Name: ToolLongOperation, Arguments: map[string]any{"steps": longOperationSteps}}
	params.SetProgressToken("everything-progress")
	if _, err := cs.CallTool(ctx, params); err != nil {
		return w.lines(), step("tools/call long_operation", err)
	}
	if err := step("progress of long_operation", w.awaitProgress(ctx, opts.Wait)); err != nil {
		return w.lines(), err
	}
	return w.lines(), step("close", cs.Close())
}

// longOperationSteps is the number of steps of the long_operation call.
const longOperationSteps = 3

// progressLine is the Wire line of the progress notification of step i of
// n.
func progressLine(i, n int) string {
	return fmt.Sprintf("< notifications/progress %d/%d %q", i, n, stepText(i, n))
}

func root(i int) *mcp.Root {
	return &mcp.Root{URI: "file:///workspace/root" + strconv.Itoa(i), Name: "root " + strconv.Itoa(i)}
}

// touchedLine is the Wire line of touch's resources/updated.
const touchedLine = "< notifications/resources/updated " + EverythingResourceURI

// rootsLog begins the Wire line of a log of the roots.
const rootsLog = `< notifications/message "Roots updated`

// logLine is the Wire line of a notifications/message with text as data.
func logLine(text string) string {
	return "< notifications/message " + strconv.Quote(text)
}

// wireLog is the Wire of one session as it grows, and the methods of the
// requests in flight in each direction, by id, to name their responses.
type wireLog struct {
	mu sync.Mutex // guards all below
	w  Wire
	// sent and received are the methods of the requests sent and received
	// by the client, by JSON id.
	sent, received map[string]string
	changed        changed
}

func (l *wireLog) lines() Wire {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append(Wire(nil), l.w...)
}

// await waits until the nth (1-based) line that starts with prefix was
// carried.
func (l *wireLog) await(ctx context.Context, timeout time.Duration, prefix string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := l.changed.until(ctx, &l.mu, func() bool { return l.w.nth(prefix, n) >= 0 })
	if err != nil {
		return fmt.Errorf("no %q (number %d) within %v: %w", prefix, n, timeout, err)
	}
	return nil
}

// awaitProgress waits for every progress notification of long_operation.
func (l *wireLog) awaitProgress(ctx context.Context, timeout time.Duration) error {
	for i := 1; i <= longOperationSteps; i++ {
		if err := l.await(ctx, timeout, progressLine(i, longOperationSteps), 1); err != nil {
			return err
		}
	}
	return nil
}

// nth is the position of the nth (1-based) line that starts with prefix,
// or -1.
func (w Wire) nth(prefix string, n int) int {
	for i := range w {
		if strings.HasPrefix(w[i], prefix) {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}

// addText adds a line that is not a message.
func (l *wireLog) addText(out bool, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.append(out, text)
}

// append adds a line; l.mu is held.
func (l *wireLog) append(out bool, line string) {
	dir := "< "
	if out {
		dir = "> "
	}
	l.w = append(l.w, dir+line)
	l.changed.fire()
}

// add adds the line of msg; out is true for a message the client sends.
func (l *wireLog) add(out bool, msg jsonrpc.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sent == nil {
		l.sent, l.received = map[string]string{}, map[string]string{}
	}
	mine, theirs := l.received, l.sent
	if out {
		mine, theirs = l.sent, l.received
	}
	var line string
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			mine[idKey(m.ID)] = m.Method
		}
		line = m.Method + requestDetail(m.Method, m.Params)
	case *jsonrpc.Response:
		method := theirs[idKey(m.ID)]
		delete(theirs, idKey(m.ID))
		line = "result " + method
		if m.Error != nil {
			line += " error " + m.Error.Error()
		} else {
			line += resultDetail(method, m.Result)
		}
	default:
		line = fmt.Sprintf("%T", msg)
	}
	l.append(out, line)
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// requestDetail is what a request or notification says, for a Wire line.
func requestDetail(method string, params json.RawMessage) string {
	var p struct {
		Name     string  `json:"name"`
		URI      string  `json:"uri"`
		Data     any     `json:"data"`
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	}
	json.Unmarshal(params, &p)
	switch method {
	case "tools/call":
		return " " + p.Name
	case "resources/subscribe", "notifications/resources/updated":
		return " " + p.URI
	case "notifications/message":
		data, _ := json.Marshal(p.Data)
		return " " + string(data)
	case "notifications/progress":
		return fmt.Sprintf(" %g/%g %q", p.Progress, p.Total, p.Message) // progressLine
	}
	return ""
}

// resultDetail is what a result says, for a Wire line.
func resultDetail(method string, result json.RawMessage) string {
	switch method {
	case "roots/list":
		var r mcp.ListRootsResult
		json.Unmarshal(result, &r)
		uris := make([]string, len(r.Roots))
		for i, root := range r.Roots {
			uris[i] = root.URI
		}
		return fmt.Sprintf(" %d: %s", len(r.Roots), strings.Join(uris, " "))
	case "tools/call":
		var r struct {
			Content []struct{ Text string }
			IsError bool
		}
		json.Unmarshal(result, &r)
		var texts []string
		for _, c := range r.Content {
			texts = append(texts, strconv.Quote(c.Text))
		}
		if r.IsError {
			texts = append(texts, "isError")
		}
		return " " + strings.Join(texts, " ")
	}
	return ""
}

// EverythingWire is the Wire of [RunEverything] against a
// server-everything look-alike, live, for a client that starts with roots
// roots (0 means 2) and whose roots the server counted as counted (0 means
// as many).
func EverythingWire(roots int) Wire {
	if roots == 0 {
		roots = 2
	}
	rootsReply := func(n int) string {
		uris := make([]string, n)
		for i := range n {
			uris[i] = root(i).URI
		}
		return fmt.Sprintf("> result roots/list %d: %s", n, strings.Join(uris, " "))
	}
	w := Wire{
		"> initialize",
		"< result initialize",
		"> notifications/initialized",
		"< notifications/tools/list_changed",
		"< notifications/tools/list_changed",
		"< roots/list",
		rootsReply(roots),
		logLine(rootsText(roots)),
		"> resources/subscribe " + EverythingResourceURI,
		"< result resources/subscribe",
		"> notifications/roots/list_changed",
		"< roots/list",
		rootsReply(roots + 1),
		logLine(rootsText(roots + 1)),
		"> tools/call " + ToolTouch,
		"< notifications/resources/updated " + EverythingResourceURI,
		"< result tools/call " + strconv.Quote(touchedText),
		"> tools/call " + ToolLongOperation,
	}
	for i := 1; i <= longOperationSteps; i++ {
		w = append(w, progressLine(i, longOperationSteps))
	}
	return append(w, "< result tools/call "+strconv.Quote(longOperationText))
}

// EverythingCauses checks the order of cause and effect in the Wire of
// [RunEverything] and says what is out of order: what
// notifications/initialized causes (tools/list_changed, the first
// roots/list) comes after it; the second roots/list after
// notifications/roots/list_changed; each log of the roots after the
// client's reply to its roots/list; the resources/updated of touch and the
// progress of long_operation between the call and its result.
func EverythingCauses(w Wire) []string {
	var problems []string
	nth := w.nth
	before := func(cause string, c int, effect string, e int) {
		switch {
		case c < 0:
			problems = append(problems, fmt.Sprintf("no %q", cause))
		case e < 0:
			problems = append(problems, fmt.Sprintf("no %q, the effect of %q", effect, cause))
		case e < c:
			problems = append(problems, fmt.Sprintf("%q (message %d) came before its cause %q (message %d)", w[e], e+1, w[c], c+1))
		}
	}
	const (
		initialized = "> notifications/initialized"
		listChanged = "< notifications/tools/list_changed"
		rootsList   = "< roots/list"
		rootsReply  = "> result roots/list"
		rootsChange = "> notifications/roots/list_changed"
	)
	before(initialized, nth(initialized, 1), listChanged, nth(listChanged, 1))
	before(initialized, nth(initialized, 1), rootsList, nth(rootsList, 1))
	before(rootsChange, nth(rootsChange, 1), rootsList, nth(rootsList, 2))
	for n := 1; n <= 2; n++ {
		before(rootsList, nth(rootsList, n), rootsReply, nth(rootsReply, n))
		before(rootsReply, nth(rootsReply, n), rootsLog, nth(rootsLog, n))
	}
	for _, c := range []struct{ call, effect string }{
		{"> tools/call " + ToolTouch, "< notifications/resources/updated"},
		{"> tools/call " + ToolLongOperation, "< notifications/progress"},
	} {
		call := nth(c.call, 1)
		before(c.call, call, c.effect, nth(c.effect, 1))
		if call < 0 {
			continue
		}
		result := w.Index(call, "< result tools/call")
		for i := call + 1; i < len(w) && !strings.HasPrefix(w[i], "> tools/call"); i++ {
			if strings.HasPrefix(w[i], c.effect) && (result < 0 || i > result) {
				problems = append(problems, fmt.Sprintf("%q (message %d) came after %q (message %d), the result of %q", w[i], i+1, w[result], result+1, c.call))
			}
		}
	}
	return problems
}

// SortCalls returns w with the server's messages after each tools/call,
// up to the client's next message, in sorted order: notifications before
// the result, progress in step order. It is for a server that does not
// keep the order of a call's messages: mcp-go's Streamable HTTP server
// sends a notification of a call on whichever of the session's streams
// takes it first, the call's or the standalone GET stream.
func (w Wire) SortCalls() Wire {
	out := append(Wire(nil), w...)
	for i := 0; i < len(out); i++ {
		if !strings.HasPrefix(out[i], "> tools/call") {
			continue
		}
		j := i + 1
		for j < len(out) && strings.HasPrefix(out[j], "< ") {
			j++
		}
		slices.Sort(out[i+1 : j])
		i = j - 1
	}
	return out
}
