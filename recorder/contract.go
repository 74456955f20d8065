package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/internal/toolschema"
)

// The kinds of ContractWarning: what the protocol-contract checks of the
// tap look at (docs/contract.md).
const (
	// ContractHeaders: the Mcp-Method or Mcp-Name header of a Streamable
	// HTTP POST disagrees with its body, is not validly encoded, or is
	// missing from a 2026-07-28 request.
	ContractHeaders = "headers"
	// ContractRequestState: a retry did not echo the requestState of an
	// input_required result untouched (2026-07-28 multi round-trip).
	ContractRequestState = "requestState"
	// ContractUnknownID: a response to an id that the other side never
	// sent (or whose answer already came).
	ContractUnknownID = "unknownId"
	// ContractDuplicateID: a request whose id is that of a request of the
	// same side in the same session still waiting for its response.
	ContractDuplicateID = "duplicateId"
	// ContractNotification: a notification that the negotiated protocol
	// version does not have, for the side that sent it.
	ContractNotification = "notification"
	// ContractOutputSchema: a tools/call result that does not conform to
	// the outputSchema of the tool as the tap saw it in tools/list.
	ContractOutputSchema = "outputSchema"
)

// ContractWarning is one breach of the protocol's contract that the tap
// saw in the traffic it forwarded. It changes nothing in the traffic: it is
// reported in the live log, in Recorder.ContractWarnings and in the
// summary.
type ContractWarning struct {
	// Kind is one of the Contract* constants.
	Kind string `json:"kind"`
	// Session numbers the session of the message from 1 in the order the
	// tap saw them (a stdio tap has the one session 1, an HTTP client one
	// per Mcp-Session-Id); 0 for a message of no session (a 2026-07-28
	// request over HTTP, a server message on a stream of no known
	// session). Session ids are secrets: they are not shown.
	Session int `json:"session"`
	// Message is the place of the message in the recording, from 1 (the
	// count of the summary's "recorded N messages").
	Message int `json:"message"`
	// ID is the JSON-RPC id of the message as JSON, "" for none.
	ID string `json:"id,omitempty"`
	// From is the side that sent the message: "client" or "server".
	From string `json:"from"`
	// Method is the message's method, or that of the request a response
	// answers ("" when unknown).
	Method string `json:"method,omitempty"`
	// Detail says what is wrong, in a sentence.
	Detail string `json:"detail"`
}

// maxContractWarnings is how many warnings a Recorder keeps for its report;
// it counts all of them.
const maxContractWarnings = 1000

// contract is the protocol-contract checker of a Recorder: the build
// goroutine hands it every observed unit (unit) and every message of it
// (message) as the builder parses them, so that it parses nothing twice
// and never runs on the forwarding path. Only the build goroutine calls
// it, except warnings and count (mu).
type contract struct {
	log *slog.Logger

	// What the current unit is (unit): its side, its HTTP note and
	// headers (nil on stdio), whether it is a batch, and its scope.
	from   cassettes.Direction
	note   *HTTPNote
	header http.Header
	cur    *scope

	scopes   map[string]*scope // by key: "" for stdio, "s:"+session id, "x"+exchange
	sessions int               // session numbers given
	byEx     map[uint64]*scope // the scope of an exchange's server messages
	exOpen   map[uint64]int    // requests of the exchange still unanswered
	endedEx  map[uint64]bool   // exchanges over with requests still unanswered
	// open counts the requests of each side (0 client, 1 server) waiting
	// for an answer in every scope, by id: a response whose scope is
	// unknown (on a GET stream) is checked against them.
	open [2]map[jsonrpc.ID]int
	// unknown is the scope of server requests that came on no known
	// session's stream; the client's replies look there too.
	unknown *scope
	// versions are the versions negotiated in any session, for a server
	// notification of no known session.
	versions map[string]bool
	// tools are the outputSchemas of the tools/list results, by tool.
	tools   map[string]json.RawMessage
	schemas *toolschema.Cache
	// states are the requestStates of input_required results, by request
	// ("tools/call\x00name"), the latest few; stateless says the latest
	// input_required result of the request carried none.
	states    map[string][]string
	stateless map[string]bool

	mu       sync.Mutex // guards warnings and count
	warnings []ContractWarning
	count    int
}

// scope is what the checks know of one session: its number, its
// negotiated version and the requests of each side waiting for an answer.
type scope struct {
	key     string
	number  int
	version string
	sent    [2]map[jsonrpc.ID]sentReq
}

// sentReq is a request waiting for its answer.
type sentReq struct {
	method string
	name   string // the tool of a tools/call, the name or uri of the MRTR requests
	ex     uint64 // the HTTP exchange that carried it, 0 for none
	n      int    // how many with this id (more than 1: a duplicate)
}

func newContract(log *slog.Logger) *contract {
	return &contract{log: log, scopes: map[string]*scope{}, byEx: map[uint64]*scope{}, exOpen: map[uint64]int{}, endedEx: map[uint64]bool{},
		open: [2]map[jsonrpc.ID]int{{}, {}}, versions: map[string]bool{}, tools: map[string]json.RawMessage{},
		schemas: toolschema.NewCache("output"), states: map[string][]string{}, stateless: map[string]bool{}}
}

// contractEvent is what the checks take, in the order it passed the tap:
// the start of an observed unit, or a message of it (its index among the
// messages, and whether it came in a batch).
type contractEvent struct {
	unit  *observed
	msg   *jsonrpc.Message
	index int
	batch bool
}

// run checks events in order: the work of the checks' worker (worker.go).
func (c *contract) run(events []contractEvent) {
	for _, ev := range events {
		if ev.unit != nil {
			c.unit(*ev.unit)
		} else {
			c.message(ev.msg, ev.index, ev.batch)
		}
	}
}

// side is 0 for the client, 1 for the server.
func side(from cassettes.Direction) int {
	if from == cassettes.FromClient {
		return 0
	}
	return 1
}

// unit starts an observed unit: it finds the scope of its messages. A
// response note (no data) that gives a session id moves the requests of
// its exchange into that session.
func (c *contract) unit(o observed) {
	c.from, c.note, c.header, c.cur = o.from, o.http, o.header, nil
	if o.ended {
		c.ended(o.http.Exchange)
		return
	}
	if o.http == nil {
		c.cur = c.scopeOf("")
		return
	}
	if o.from == cassettes.FromClient {
		c.header = o.http.reqHeader
		c.cur = c.clientScope(o.http)
		return
	}
	if o.data == nil {
		c.response(o.http)
		return
	}
	c.cur = c.byEx[o.http.Exchange] // nil: unknown
}

// clientScope is the scope of a client message over HTTP: its session,
// else its HTTP+SSE message endpoint's query, else its exchange alone.
func (c *contract) clientScope(n *HTTPNote) *scope {
	if sid := headerOf(n.reqHeader, n.RequestHeaders, mcp.HeaderSessionID); sid != "" {
		return c.scopeOf("s:" + sid)
	}
	if n.reqURL != nil && n.reqURL.Path != "/mcp" && n.reqURL.RawQuery != "" {
		return c.scopeOf("q:" + n.reqURL.RawQuery)
	}
	return &scope{key: "x" + strconv.FormatUint(n.Exchange, 10)}
}

func (c *contract) scopeOf(key string) *scope {
	s := c.scopes[key]
	if s == nil {
		c.sessions++
		s = &scope{key: key, number: c.sessions}
		c.scopes[key] = s
	}
	return s
}

// response handles the headers of an HTTP response: a session id issued
// to an exchange of no session (initialize) makes its requests the
// session's.
func (c *contract) response(n *HTTPNote) {
	s := c.byEx[n.Exchange]
	if s == nil || !strings.HasPrefix(s.key, "x") {
		return
	}
	sid := headerOf(n.respHeader, n.ResponseHeaders, mcp.HeaderSessionID)
	if sid == "" {
		return
	}
	into := c.scopeOf("s:" + sid)
	for d := range s.sent {
		for id, r := range s.sent[d] {
			if into.sent[d] == nil {
				into.sent[d] = map[jsonrpc.ID]sentReq{}
			}
			into.sent[d][id] = r
		}
	}
	if into.version == "" {
		into.version = s.version
	}
	for ex, es := range c.byEx {
		if es == s {
			c.byEx[ex] = into
		}
	}
	delete(c.scopes, s.key)
}

// ended notes that the HTTP exchange ex is over: its requests still
// unanswered are no longer in flight for the duplicate check (the client
// got an answer of the tap's, a 502, or went away), though an answer that
// comes for them later (on a resumed stream) is still theirs.
func (c *contract) ended(ex uint64) {
	if c.exOpen[ex] > 0 {
		c.endedEx[ex] = true
	}
}

// headerOf is a header of the raw h, or of the recorded m when h is nil.
func headerOf(h http.Header, m map[string]string, name string) string {
	if h != nil {
		return h.Get(name)
	}
	return m[http.CanonicalHeaderKey(name)]
}

// hasHeader reports whether the raw h (or the recorded m) has the header,
// and its value.
func hasHeader(h http.Header, m map[string]string, name string) (string, bool) {
	if h != nil {
		v, ok := h[http.CanonicalHeaderKey(name)]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	v, ok := m[http.CanonicalHeaderKey(name)]
	return v, ok
}

// message checks one message of the current unit; index is its place in
// the recording, batch says it came in a batch.
func (c *contract) message(msg *jsonrpc.Message, index int, batch bool) {
	d := side(c.from)
	var p params
	if k := msg.Kind(); d == 0 && (k == jsonrpc.KindRequest || k == jsonrpc.KindNotification) {
		p = readParams(msg)
		if !batch {
			c.checkHeaders(msg, &p, index)
		}
	}
	switch msg.Kind() {
	case jsonrpc.KindRequest:
		c.request(d, msg, &p, index)
	case jsonrpc.KindNotification:
		c.notification(d, msg, &p, index)
	case jsonrpc.KindResponse:
		c.answer(d, msg, index)
	}
}

// request checks a request for a duplicate in-flight id and a changed
// requestState, and notes it as waiting for its answer.
func (c *contract) request(d int, msg *jsonrpc.Message, p *params, index int) {
	s := c.cur
	if s == nil {
		// A server request on a stream of no known session.
		if c.unknown == nil {
			c.unknown = &scope{key: "?"}
		}
		s = c.unknown
	}
	if d == 0 {
		if v := c.messageVersion(p); v != "" {
			s.version = v
			c.versions[v] = true
		}
	}
	r := sentReq{method: msg.Method, n: 1}
	if c.note != nil {
		r.ex = c.note.Exchange
	}
	switch msg.Method {
	case "tools/call", "prompts/get", "resources/read":
		if d == 0 {
			r.name = text(p.name)
			c.checkRequestState(msg, p, r, index)
		} else {
			r.name = gjson.GetBytes(msg.Params, mcp.NameMember(msg.Method)).String()
		}
	}
	if s.sent[d] == nil {
		s.sent[d] = map[jsonrpc.ID]sentReq{}
	}
	if old, dup := s.sent[d][msg.ID]; dup {
		if s != c.unknown && !c.endedEx[old.ex] {
			c.warn(ContractDuplicateID, s, msg, index, msg.Method,
				fmt.Sprintf("the %s reused id %s while its %s request with that id is still waiting for its response", sideName(d), msg.ID, old.method))
		}
		r.n += old.n
	}
	s.sent[d][msg.ID] = r
	c.open[d][msg.ID]++
	if r.ex != 0 && d == 0 {
		c.byEx[r.ex] = s
		c.exOpen[r.ex]++
		if strings.HasPrefix(s.key, "x") {
			c.scopes[s.key] = s // found again by the server's messages (byEx), forgotten once answered
		}
	}
}

// answer checks that a response answers a request of the other side that
// waits for it, and looks at what it answers.
func (c *contract) answer(d int, msg *jsonrpc.Message, index int) {
	if msg.ID.IsZero() || msg.ID == "null" {
		return // an error about a message that could not be read
	}
	other := 1 - d
	s := c.cur
	r, found := sentReq{}, false
	if s != nil {
		r, found = s.sent[other][msg.ID]
	}
	if !found && c.unknown != nil && d == 0 {
		if r, found = c.unknown.sent[other][msg.ID]; found {
			s = c.unknown
		}
	}
	if !found && s == nil && c.open[other][msg.ID] > 0 {
		// On a stream of no known session (a resumed GET stream): the
		// answer of a request of some session.
		for _, ss := range c.scopes {
			if r, found = ss.sent[other][msg.ID]; found {
				s = ss
				break
			}
		}
		if !found {
			return
		}
	}
	if !found {
		c.warn(ContractUnknownID, c.cur, msg, index, "",
			fmt.Sprintf("the %s answered id %s, which the %s never sent or which was already answered", sideName(d), msg.ID, sideName(other)))
		return
	}
	c.forget(s, other, msg.ID, r)
	if d == 1 && msg.Result != nil {
		c.result(s, r, msg, index)
	}
}

// forget takes an answered request out of s.
func (c *contract) forget(s *scope, d int, id jsonrpc.ID, r sentReq) {
	if r.n > 1 {
		r.n--
		s.sent[d][id] = r
	} else {
		delete(s.sent[d], id)
	}
	if c.open[d][id]--; c.open[d][id] <= 0 {
		delete(c.open[d], id)
	}
	if r.ex != 0 && d == 0 {
		if c.exOpen[r.ex]--; c.exOpen[r.ex] <= 0 {
			delete(c.exOpen, r.ex)
			delete(c.byEx, r.ex)
			delete(c.endedEx, r.ex)
		}
	}
	if strings.HasPrefix(s.key, "x") && len(s.sent[0]) == 0 && len(s.sent[1]) == 0 {
		delete(c.scopes, s.key)
	}
}

// result looks at the server's result of a client request r: the version
// initialize negotiated, the tools of tools/list, the requestState of an
// input_required result, a tools/call result against its outputSchema.
func (c *contract) result(s *scope, r sentReq, msg *jsonrpc.Message, index int) {
	switch r.method {
	case mcp.MethodInitialize:
		if v := gjson.GetBytes(msg.Result, "protocolVersion").String(); v != "" {
			s.version = v
			c.versions[v] = true
		}
	case "tools/list":
		c.toolList(msg.Result)
	case "tools/call", "prompts/get", "resources/read":
		if _, schema := c.tools[r.name]; (!schema || r.method != "tools/call") && !bytes.Contains(msg.Result, []byte(`"input_required"`)) {
			return // nothing to check: the common result is not read
		}
		var res struct {
			resultType, requestState, structured gjson.Result
			isError                              bool
		}
		view(msg.Result).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "resultType":
				res.resultType = v
			case "requestState":
				res.requestState = v
			case "structuredContent":
				res.structured = v
			case "isError":
				res.isError = v.Bool()
			}
			return true
		})
		rt := res.resultType.Str
		if rt == "input_required" {
			key := r.method + "\x00" + r.name
			st := res.requestState
			if st.Type == gjson.String {
				c.states[key] = append(c.states[key][max(0, len(c.states[key])-maxStates+1):], strings.Clone(st.String()))
				delete(c.stateless, key)
			} else {
				c.stateless[key] = true
			}
			return
		}
		if r.method == "tools/call" && (rt == "" || rt == "complete") && !res.isError {
			c.checkOutput(s, r, msg, res.structured, index)
		}
	}
}

// maxStates is how many requestStates the checks keep per request.
const maxStates = 16

// toolList notes the outputSchemas of a tools/list page.
func (c *contract) toolList(result json.RawMessage) {
	gjson.GetBytes(result, "tools").ForEach(func(_, t gjson.Result) bool {
		name := t.Get("name").String()
		if name == "" {
			return true
		}
		if os := t.Get("outputSchema"); os.Exists() && os.Type != gjson.Null {
			c.tools[name] = json.RawMessage(os.Raw)
		} else {
			delete(c.tools, name)
		}
		return true
	})
}

// checkOutput checks a tools/call result against the tool's outputSchema.
func (c *contract) checkOutput(s *scope, r sentReq, msg *jsonrpc.Message, structured gjson.Result, index int) {
	raw, ok := c.tools[r.name]
	if !ok {
		return
	}
	sch, err := c.schemas.Get(r.name, raw)
	if err != nil {
		return // not a usable schema: nothing to check against
	}
	var sc json.RawMessage
	if structured.Exists() {
		sc = json.RawMessage(structured.Raw)
	}
	if why := toolschema.StructuredProblem(sch, sc); why != "" {
		c.warn(ContractOutputSchema, s, msg, index, r.method, fmt.Sprintf("the result of tool %q: %s", r.name, why))
	}
}

// checkRequestState checks the requestState of a client request that may
// be the retry of an input_required result: it must be one the server sent
// for this request, unchanged.
func (c *contract) checkRequestState(msg *jsonrpc.Message, p *params, r sentReq, index int) {
	if p.state == nil && !p.inputResponses {
		return
	}
	key := r.method + "\x00" + r.name
	what := r.method
	if r.name != "" {
		what += " " + strconv.Quote(r.name)
	}
	st := p.state
	issued := c.states[key]
	switch {
	case st == nil:
		if len(issued) > 0 && !c.stateless[key] && p.inputResponses {
			c.warn(ContractRequestState, c.cur, msg, index, r.method,
				fmt.Sprintf("the retry of %s has inputResponses but not the requestState %s of its input_required result", what, shortState(issued[len(issued)-1])))
		}
		return
	case !isString(st):
		c.warn(ContractRequestState, c.cur, msg, index, r.method,
			fmt.Sprintf("the requestState of %s is %s, not the string the server sent", what, cut(string(st))))
		return
	}
	v := text(st)
	for _, s := range issued {
		if s == v {
			return
		}
	}
	for k, ss := range c.states {
		for _, s := range ss {
			if s == v {
				c.warn(ContractRequestState, c.cur, msg, index, r.method,
					fmt.Sprintf("%s echoes the requestState of another request (%s)", what, strings.Replace(k, "\x00", " ", 1)))
				return
			}
		}
	}
	if len(issued) > 0 {
		c.warn(ContractRequestState, c.cur, msg, index, r.method,
			fmt.Sprintf("the requestState of %s was changed: the server sent %s, the client echoed %s", what, shortState(issued[len(issued)-1]), shortState(v)))
		return
	}
	c.warn(ContractRequestState, c.cur, msg, index, r.method,
		fmt.Sprintf("%s carries the requestState %s, which no input_required result that the tap saw sent", what, shortState(v)))
}

// shortState quotes a requestState, cut to 40 characters.
func shortState(s string) string { return strconv.Quote(cut(s)) }

// cut cuts s to 40 characters: a requestState is the server's and may be
// long.
func cut(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return s
}

// notification checks that the negotiated version has the notification
// for the side that sent it.
func (c *contract) notification(d int, msg *jsonrpc.Message, p *params, index int) {
	if !strings.HasPrefix(msg.Method, "notifications/") {
		return
	}
	fromClient := d == 0
	var v string
	if fromClient {
		v = c.messageVersion(p)
	}
	if v == "" && c.cur != nil {
		v = c.cur.version
	}
	if v == "" && c.cur == nil {
		// A server notification of no known session: any version that a
		// session negotiated may be its own.
		for sv := range c.versions {
			if !mcp.Known(sv) || mcp.NotificationIn(sv, false, msg.Method) {
				return
			}
		}
		if len(c.versions) == 0 {
			return
		}
		v = "any negotiated version"
	} else if !mcp.Known(v) || mcp.NotificationIn(v, fromClient, msg.Method) {
		return
	}
	in := mcp.NotificationVersions(fromClient, msg.Method)
	detail := fmt.Sprintf("%s is not a %s notification of protocol version %s", msg.Method, sideName(d), v)
	if len(in) > 0 {
		detail += " (it is one of " + strings.Join(in, ", ") + ")"
	} else {
		detail += " (nor of any version)"
	}
	c.warn(ContractNotification, c.cur, msg, index, msg.Method, detail)
}

// messageVersion is the protocol version a client message says it speaks:
// its MCP-Protocol-Version header over HTTP, else its per-request _meta
// (2026-07-28); "" for none.
func (c *contract) messageVersion(p *params) string {
	if c.from == cassettes.FromClient {
		var m map[string]string
		if c.note != nil {
			m = c.note.RequestHeaders
		}
		if v := headerOf(c.header, m, mcp.HeaderProtocolVersion); v != "" {
			return v
		}
	}
	return p.version
}

// params is what the checks read of a client message's params, in one
// pass over them (readParams).
type params struct {
	name           json.RawMessage // params.name or params.uri (mcp.NameMember)
	state          json.RawMessage // params.requestState
	inputResponses bool            // params.inputResponses is there
	version        string          // params._meta[mcp.MetaProtocolVersion]
}

// readParams reads the params as the replay reads them (mcp.ReadParams):
// the last of duplicate names wins.
func readParams(msg *jsonrpc.Message) params {
	rp := mcp.ReadParams(msg.Params)
	return params{name: rp.Named(msg.Method), state: rp.RequestState, inputResponses: rp.InputResponses != nil, version: rp.ProtocolVersion()}
}

// text is the text of a JSON value as gjson gives it: a string's value,
// else the value as written ("" for none).
func text(raw json.RawMessage) string {
	if s, ok := mcp.DecodeString(raw); ok {
		return s
	}
	return string(raw)
}

// isString reports whether raw is a JSON string.
func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// view is raw as gjson reads it, without a copy: raw (a message the
// Recorder owns) is never changed, and what the checks keep of it they
// clone.
func view(raw []byte) gjson.Result {
	if len(raw) == 0 {
		return gjson.Result{}
	}
	return gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw)))
}

// checkHeaders compares the Mcp-Method and Mcp-Name headers of the HTTP
// POST that carried msg (alone) with msg: a header that is there must
// agree with the body (Mcp-Name after its Value Encoding is decoded); a
// 2026-07-28 request must have them (streamable-http, Standard Request
// Headers).
func (c *contract) checkHeaders(msg *jsonrpc.Message, p *params, index int) {
	h, m := c.header, map[string]string(nil)
	if c.note != nil {
		m = c.note.RequestHeaders
	}
	if h == nil && m == nil {
		return // not over HTTP
	}
	required := msg.Kind() == jsonrpc.KindRequest && mcp.Stateless(headerOf(h, m, mcp.HeaderProtocolVersion))
	hm, ok := hasHeader(h, m, mcp.HeaderMethod)
	switch {
	case ok && hm != msg.Method:
		c.warn(ContractHeaders, c.cur, msg, index, msg.Method,
			fmt.Sprintf("the %s header says %q but the body's method is %q", mcp.HeaderMethod, hm, msg.Method))
	case !ok && required:
		c.warn(ContractHeaders, c.cur, msg, index, msg.Method,
			fmt.Sprintf("the 2026-07-28 request %s has no %s header", msg.Method, mcp.HeaderMethod))
	}
	member := mcp.NameMember(msg.Method)
	if member == "" {
		return
	}
	body := p.name
	hn, ok := hasHeader(h, m, mcp.HeaderName)
	if !ok {
		if required {
			c.warn(ContractHeaders, c.cur, msg, index, msg.Method,
				fmt.Sprintf("the 2026-07-28 request %s has no %s header (params.%s is %s)", msg.Method, mcp.HeaderName, member, body))
		}
		return
	}
	name, valid := mcp.DecodeValue(hn)
	switch {
	case !valid:
		c.warn(ContractHeaders, c.cur, msg, index, msg.Method,
			fmt.Sprintf("the %s header %q is not a valid header value (plain visible ASCII, or =?base64?…?=)", mcp.HeaderName, hn))
	case !isString(body) || name != text(body):
		c.warn(ContractHeaders, c.cur, msg, index, msg.Method,
			fmt.Sprintf("the %s header says %q but the body's params.%s is %s", mcp.HeaderName, name, member, body))
	}
}

func sideName(d int) string {
	if d == 0 {
		return "client"
	}
	return "server"
}

// warn reports a warning about msg, in the live log and the list.
func (c *contract) warn(kind string, s *scope, msg *jsonrpc.Message, index int, method, detail string) {
	if method == "" {
		method = msg.Method
	}
	w := ContractWarning{Kind: kind, Message: index, ID: string(msg.ID), From: sideName(side(c.from)), Method: method, Detail: detail}
	if s != nil {
		w.Session = s.number
	}
	livelog.Warning(c.log, dirOf(c.from), msg.Raw, "contract "+kind, detail)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count++
	if len(c.warnings) < maxContractWarnings {
		c.warnings = append(c.warnings, w)
	}
}

// list returns the warnings kept and how many there were in all.
func (c *contract) list() ([]ContractWarning, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ContractWarning(nil), c.warnings...), c.count
}

// contractCount is "N contract warnings" for the summary.
func contractCount(n int) string {
	if n == 1 {
		return "1 contract warning"
	}
	return fmt.Sprintf("%d contract warnings", n)
}

// ContractWarnings returns the protocol-contract warnings of the recording
// so far (docs/contract.md), in the order they came, the first 1000 of
// them, and how many there were in all.
func (r *Recorder) ContractWarnings() ([]ContractWarning, int) {
	if r.contract == nil {
		return nil, 0
	}
	r.Sync()
	r.checks.wait()
	return r.contract.list()
}

// observeHeader is Observe for a client message that came over HTTP to a
// tap that keeps no HTTP note of it (the stdio bridge): the contract
// checks read its headers.
func (r *Recorder) observeHeader(data []byte, at time.Time, h http.Header) {
	r.enqueue(observed{from: cassettes.FromClient, data: data, at: at, header: h})
}

// endExchange says that the HTTP exchange ex is over (the tap answered
// it, or the client went away).
func (r *Recorder) endExchange(ex uint64) {
	r.enqueue(observed{from: cassettes.FromServer, at: r.now(), http: &HTTPNote{Exchange: ex}, ended: true})
}
