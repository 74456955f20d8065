package replayer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// rawClient speaks JSON-RPC lines to a server: call sends a request and
// waits for its answer; notifications are kept.
type rawClient struct {
	w      io.Writer
	mu     sync.Mutex
	nextID int
	waits  map[string]chan json.RawMessage
	notes  []json.RawMessage
	noteCh chan struct{}
}

func newRawClient(r io.Reader, w io.Writer) *rawClient {
	c := &rawClient{w: w, waits: map[string]chan json.RawMessage{}, noteCh: make(chan struct{}, 100)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := append(json.RawMessage(nil), sc.Bytes()...)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(line, &m)
			c.mu.Lock()
			if m.Method != "" {
				c.notes = append(c.notes, line)
				c.mu.Unlock()
				c.noteCh <- struct{}{}
				continue
			}
			ch := c.waits[string(m.ID)]
			c.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}()
	return c
}

func (c *rawClient) call(t *testing.T, method string, params any) map[string]any {
	t.Helper()
	c.mu.Lock()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	ch := make(chan json.RawMessage, 1)
	c.waits[id] = ch
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, p)
	select {
	case line := <-ch:
		var out map[string]any
		json.Unmarshal(line, &out)
		return out
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer to %s", method)
		return nil
	}
}

func (c *rawClient) notify(method string) {
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","method":%q}`+"\n", method)
}

// at digs into a decoded JSON value.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// taskSession is what the client does: a task-augmented call, polling, the
// result, the list, a cancel of the finished task.
func taskSession(t *testing.T, c *rawClient) (taskID string, out []string) {
	t.Helper()
	c.call(t, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	c.notify("notifications/initialized")
	res := c.call(t, "tools/call", map[string]any{"name": "crunch", "arguments": map[string]any{}, "task": map[string]any{"ttl": 60000}})
	taskID, _ = at(res, "result", "task", "taskId").(string)
	if taskID == "" {
		t.Fatalf("no task: %v", res)
	}
	out = append(out, fmt.Sprint("created ", at(res, "result", "task", "status")))
	for i := 0; ; i++ {
		g := c.call(t, "tasks/get", map[string]any{"taskId": taskID})
		if at(g, "result", "taskId") != taskID {
			t.Fatalf("tasks/get answered another task: %v", g)
		}
		if at(g, "result", "status") == "completed" {
			break
		}
		if i > 50 {
			t.Fatalf("the task does not complete: %v", g)
		}
		time.Sleep(10 * time.Millisecond) // the client's poll interval
	}
	r := c.call(t, "tasks/result", map[string]any{"taskId": taskID})
	out = append(out, fmt.Sprint("result ", at(r, "result", "content", 0, "text")))
	if rt := at(r, "result", "_meta", "io.modelcontextprotocol/related-task", "taskId"); rt != taskID {
		t.Errorf("tasks/result related-task %v, want %s", rt, taskID)
	}
	l := c.call(t, "tasks/list", map[string]any{})
	tasks, _ := at(l, "result", "tasks").([]any)
	for _, tk := range tasks {
		out = append(out, fmt.Sprint("listed ", at(tk, "taskId") == taskID, " ", at(tk, "status")))
	}
	x := c.call(t, "tasks/cancel", map[string]any{"taskId": taskID})
	out = append(out, fmt.Sprint("cancel ", at(x, "error", "code")))
	return taskID, out
}

func taskServer() *mgserver.MCPServer {
	s := mgserver.NewMCPServer("task-server", "1", mgserver.WithToolCapabilities(false), mgserver.WithTaskCapabilities(true, true, true))
	s.AddTool(mgmcp.NewTool("crunch", mgmcp.WithTaskSupport(mgmcp.TaskSupportOptional)),
		func(ctx context.Context, req mgmcp.CallToolRequest) (*mgmcp.CallToolResult, error) {
			return mgmcp.NewToolResultText("crunched"), nil
		})
	return s
}

// A task session with a real mcp-go server, recorded, replays to a client
// with a fresh task id that tasks/get, tasks/result, tasks/list and
// tasks/cancel know; an unknown task id gets -32602.
// recordTasks records taskSession between a raw client and a real mcp-go
// server with tasks, through an in-process tap: the cassette, the task id
// the server made, what the client saw, and the number of recorded
// notifications/tasks/status.
func recordTasks(t *testing.T) (c *cassettes.Cassette, recordedID string, live []string, recordedStatus int) {
	t.Helper()
	// mcp-go sends the status notification to the sessions it knows,
	// dropping it when a session's channel is full: a busy machine can
	// record a session without one. Record again then.
	for range 5 {
		if c, recordedID, live, recordedStatus = recordTasksOnce(t); recordedStatus > 0 {
			return c, recordedID, live, recordedStatus
		}
	}
	t.Fatal("five recordings had no notifications/tasks/status")
	return
}

func recordTasksOnce(t *testing.T) (c *cassettes.Cassette, recordedID string, live []string, recordedStatus int) {
	t.Helper()
	c = recordThroughTap(t, func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) {
		mgserver.NewStdioServer(taskServer()).Listen(ctx, r, w)
	}, func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) {
		recordedID, live = taskSession(t, newRawClient(r, w))
	})
	for _, in := range c.Interactions {
		for _, x := range in.Exchange {
			if strings.Contains(string(x.Message), "notifications/tasks/status") {
				recordedStatus++
			}
		}
		if strings.Contains(string(in.Notification), "notifications/tasks/status") {
			recordedStatus++
		}
	}
	return c, recordedID, live, recordedStatus
}

func TestTasksReplayWithLiveIDs(t *testing.T) {
	c, recordedID, live, recordedStatus := recordTasks(t)
	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // two sessions: each gets its own id
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		clientR, clientW, serverR, serverW := pipePair()
		go func() { e.Serve(ctx, serverR, serverW); serverW.Close() }()
		rc := newRawClient(clientR, clientW)
		liveID, got := taskSession(t, rc)
		if liveID == recordedID {
			t.Errorf("round %d: the replay handed out the recorded task id %s", round, liveID)
		}
		if strings.Join(got, "\n") != strings.Join(live, "\n") {
			t.Errorf("round %d: replay differs:\nlive   %q\nreplay %q", round, live, got)
		}
		// Status notifications name the live task.
		rc.mu.Lock()
		status := 0
		for _, n := range rc.notes {
			if strings.Contains(string(n), "notifications/tasks/status") {
				status++
				if !strings.Contains(string(n), liveID) {
					t.Errorf("round %d: status notification of another task: %s", round, n)
				}
			}
		}
		rc.mu.Unlock()
		if status != recordedStatus {
			t.Errorf("round %d: %d status notifications, recorded %d", round, status, recordedStatus)
		}
		// The recorded id, or any other, is no task of this session.
		for _, id := range []string{recordedID, "nope"} {
			g := rc.call(t, "tasks/get", map[string]any{"taskId": id})
			if at(g, "error", "code") != float64(-32602) {
				t.Errorf("round %d: tasks/get of %s: %v", round, id, g)
			}
		}
		clientW.Close()
		cancel()
	}
}

// A hand-written cassette: a task whose tasks/result waits on an
// elicitation tied to the task; no tasks/list recorded.
const taskCassette = `{"version":1,"meta":{},"interactions":[
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}}},
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"book","task":{"ttl":1000}}},
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"rec-1","status":"working","createdAt":"2025-11-25T10:00:00Z","lastUpdatedAt":"2025-11-25T10:00:00Z","ttl":1000}}}}},
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"rec-1"}},
 "exchange":[
  {"from":"server","atMs":0,"message":{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"rec-1","status":"input_required","createdAt":"2025-11-25T10:00:00Z","lastUpdatedAt":"2025-11-25T10:00:01Z","ttl":1000}}},
  {"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"mode":"form","message":"seat?","requestedSchema":{"type":"object","properties":{}},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"rec-1"}}}}},
  {"from":"client","atMs":0,"message":{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"rec-1"}}}}}],
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"booked"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"rec-1"}}}}}}
]}`

func TestTasksHandWritten(t *testing.T) {
	c, err := cassettes.Parse("tasks.json", []byte(taskCassette))
	if err != nil {
		t.Fatal(err)
	}
	var mismatches []replayer.ReplyMismatch
	e, err := replayer.New(c, &replayer.Options{OnReplyMismatch: func(m replayer.ReplyMismatch) { mismatches = append(mismatches, m) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	clientR, clientW, serverR, serverW := pipePair()
	go func() { e.Serve(ctx, serverR, serverW); serverW.Close() }()
	defer clientW.Close()
	// Reply to the elicitation with the live task id, as a client does.
	rc := newRawClient(clientR, clientW)
	go func() {
		for range rc.noteCh {
			rc.mu.Lock()
			n := rc.notes[len(rc.notes)-1]
			rc.mu.Unlock()
			var m map[string]any
			json.Unmarshal(n, &m)
			if m["method"] == "elicitation/create" {
				id, _ := json.Marshal(m["id"])
				task := at(m, "params", "_meta", "io.modelcontextprotocol/related-task", "taskId")
				fmt.Fprintf(clientW, `{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}}}`+"\n", id, task)
			}
		}
	}()
	rc.call(t, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}})
	res := rc.call(t, "tools/call", map[string]any{"name": "book", "task": map[string]any{"ttl": 1000}})
	live, _ := at(res, "result", "task", "taskId").(string)
	if live == "" || live == "rec-1" {
		t.Fatalf("task id %q", live)
	}
	r := rc.call(t, "tasks/result", map[string]any{"taskId": live})
	if at(r, "result", "content", 0, "text") != "booked" || at(r, "result", "_meta", "io.modelcontextprotocol/related-task", "taskId") != live {
		t.Errorf("tasks/result: %v", r)
	}
	rc.mu.Lock()
	for _, n := range rc.notes {
		if strings.Contains(string(n), "rec-1") {
			t.Errorf("a recorded task id reached the client: %s", n)
		}
	}
	rc.mu.Unlock()
	if len(mismatches) > 0 {
		t.Errorf("the reply with the live task id was taken for a mismatch: %+v", mismatches)
	}
	// tasks/list, never recorded, lists the session's task as last seen.
	l := rc.call(t, "tasks/list", map[string]any{})
	if at(l, "result", "tasks", 0, "taskId") != live || at(l, "result", "tasks", 0, "status") != "input_required" || at(l, "result", "tasks", 1) != nil {
		t.Errorf("tasks/list: %v", l)
	}
}
