package replayer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// taskHTTPClient is a real mcp-go client over Streamable HTTP that keeps
// the notifications it gets and answers elicitations, echoing the
// related-task _meta of the request in its reply as a task-aware client
// does.
type taskHTTPClient struct {
	c     *mgclient.Client
	mu    sync.Mutex
	notes []mgmcp.JSONRPCNotification
}

type taskElicit struct{ tc *taskHTTPClient }

func (h taskElicit) Elicit(ctx context.Context, req mgmcp.ElicitationRequest) (*mgmcp.ElicitationResult, error) {
	res := &mgmcp.ElicitationResult{ElicitationResponse: mgmcp.ElicitationResponse{Action: "accept", Content: map[string]any{}}}
	if m := req.Params.Meta; m != nil && m.AdditionalFields["io.modelcontextprotocol/related-task"] != nil {
		res.Meta = &mgmcp.Meta{AdditionalFields: map[string]any{"io.modelcontextprotocol/related-task": m.AdditionalFields["io.modelcontextprotocol/related-task"]}}
	}
	return res, nil
}

func startTaskHTTPClient(t *testing.T, ctx context.Context, url string) *taskHTTPClient {
	t.Helper()
	tr, err := mgtransport.NewStreamableHTTP(url, mgtransport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	tc := &taskHTTPClient{}
	tc.c = mgclient.NewClient(tr, mgclient.WithElicitationHandler(taskElicit{tc}))
	tc.c.OnNotification(func(n mgmcp.JSONRPCNotification) {
		tc.mu.Lock()
		tc.notes = append(tc.notes, n)
		tc.mu.Unlock()
	})
	if err := tc.c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.c.Close() })
	var init mgmcp.InitializeRequest
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mgmcp.Implementation{Name: "mcpgo-task-client", Version: "1"}
	if _, err := tc.c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return tc
}

// callTask sends a task-augmented tools/call (mcp-go's CallTool does not
// read a CreateTaskResult) and returns the task.
func (tc *taskHTTPClient) callTask(t *testing.T, ctx context.Context, params map[string]any) mgmcp.Task {
	t.Helper()
	resp, err := tc.c.GetTransport().SendRequest(ctx, mgtransport.JSONRPCRequest{JSONRPC: "2.0", ID: mgmcp.NewRequestId(int64(1000)), Method: "tools/call", Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("tools/call: %+v", resp.Error)
	}
	var r mgmcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &r); err != nil || r.Task.TaskId == "" {
		t.Fatalf("no task in %s (%v)", resp.Result, err)
	}
	return r.Task
}

// serveTasks replays c over HTTP until the test and its clients' cleanups
// are done.
func serveTasks(t *testing.T, c *cassettes.Cassette, opts *replayer.Options) *httptest.Server {
	t.Helper()
	e, err := replayer.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() }) // after the clients' own cleanups
	return srv
}

// statusNotes returns the task ids of the notifications/tasks/status seen.
func (tc *taskHTTPClient) statusNotes() []string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var ids []string
	for _, n := range tc.notes {
		if n.Method == "notifications/tasks/status" {
			ids = append(ids, fmt.Sprint(n.Params.AdditionalFields["taskId"]))
		}
	}
	return ids
}

// waitStatusNotes waits up to 5 s for n status notifications: the client
// hands notifications to its handler on a goroutine of its own, so the
// last may land after the call that caused it returned.
func (tc *taskHTTPClient) waitStatusNotes(n int) []string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ids := tc.statusNotes()
		if len(ids) >= n || time.Now().After(deadline) {
			return ids
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A task session recorded from a real mcp-go server over stdio replays
// over Streamable HTTP to a real mcp-go client: the same outcome with a
// fresh task id that tasks/get, tasks/result, tasks/list and tasks/cancel
// know; notifications/tasks/status and the related-task _meta name the
// live id; the recorded id and any other get -32602.
func TestTasksOverStreamableHTTP(t *testing.T) {
	c, recordedID, live, recordedStatus := recordTasks(t)
	srv := serveTasks(t, c, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var ids []string
	for round := range 2 { // two sessions: each its own task id
		tc := startTaskHTTPClient(t, ctx, srv.URL+"/mcp")
		task := tc.callTask(t, ctx, map[string]any{"name": "crunch", "arguments": map[string]any{}, "task": map[string]any{"ttl": 60000}})
		liveID := task.TaskId
		ids = append(ids, liveID)
		got := []string{fmt.Sprint("created ", task.Status)}
		g, err := tc.c.WaitForTask(ctx, mgmcp.GetTaskRequest{Params: mgmcp.GetTaskParams{TaskId: liveID}}, 10*time.Millisecond)
		if err != nil || g.TaskId != liveID || g.Status != "completed" {
			t.Fatalf("round %d: tasks/get: %+v %v", round, g, err)
		}
		r, err := tc.c.TaskResult(ctx, mgmcp.TaskResultRequest{Params: mgmcp.TaskResultParams{TaskId: liveID}})
		if err != nil {
			t.Fatalf("round %d: tasks/result: %v", round, err)
		}
		raw, _ := json.Marshal(r)
		var rv map[string]any
		json.Unmarshal(raw, &rv)
		got = append(got, fmt.Sprint("result ", at(rv, "content", 0, "text")))
		if rt := at(rv, "_meta", "io.modelcontextprotocol/related-task", "taskId"); rt != liveID {
			t.Errorf("round %d: tasks/result related-task %v, want %s", round, rt, liveID)
		}
		l, err := tc.c.ListTasks(ctx, mgmcp.ListTasksRequest{})
		if err != nil {
			t.Fatalf("round %d: tasks/list: %v", round, err)
		}
		for _, tk := range l.Tasks {
			got = append(got, fmt.Sprint("listed ", tk.TaskId == liveID, " ", tk.Status))
		}
		_, err = tc.c.CancelTask(ctx, mgmcp.CancelTaskRequest{Params: mgmcp.CancelTaskParams{TaskId: liveID}})
		code := any(nil)
		if err != nil {
			code = float64(-32602) // mcp-go reports the JSON-RPC error as text: check it
			if !strings.Contains(err.Error(), "terminal") && !strings.Contains(err.Error(), "cancel") {
				t.Errorf("round %d: tasks/cancel: %v", round, err)
			}
		}
		got = append(got, fmt.Sprint("cancel ", code))
		if strings.Join(got, "\n") != strings.Join(live, "\n") {
			t.Errorf("round %d: replay over HTTP differs:\nlive   %q\nreplay %q", round, live, got)
		}
		status := tc.waitStatusNotes(recordedStatus)
		if len(status) != recordedStatus {
			t.Errorf("round %d: %d status notifications, recorded %d", round, len(status), recordedStatus)
		}
		for _, id := range status {
			if id != liveID {
				t.Errorf("round %d: a status notification of task %s, want %s", round, id, liveID)
			}
		}
		for _, id := range []string{recordedID, "nope"} {
			if _, err := tc.c.GetTask(ctx, mgmcp.GetTaskRequest{Params: mgmcp.GetTaskParams{TaskId: id}}); err == nil || !strings.Contains(err.Error(), "Task not found") {
				t.Errorf("round %d: tasks/get of %s: %v", round, id, err)
			}
		}
	}
	if ids[0] == recordedID || ids[1] == recordedID || ids[0] == ids[1] {
		t.Errorf("task ids: recorded %s, sessions %q", recordedID, ids)
	}
}

// The hand-written task whose tasks/result waits on an elicitation tied to
// the task, over Streamable HTTP to an mcp-go client: the elicitation
// reaches the client on the tasks/result stream with the live task id in
// its related-task _meta, the reply that echoes it is no mismatch, and
// tasks/list (never recorded) lists the live task.
func TestTasksElicitationOverStreamableHTTP(t *testing.T) {
	c, err := cassettes.Parse("tasks.json", []byte(taskCassette))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var mismatches []replayer.ReplyMismatch
	srv := serveTasks(t, c, &replayer.Options{OnReplyMismatch: func(m replayer.ReplyMismatch) { mu.Lock(); mismatches = append(mismatches, m); mu.Unlock() }})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	tc := startTaskHTTPClient(t, ctx, srv.URL+"/mcp")
	task := tc.callTask(t, ctx, map[string]any{"name": "book", "task": map[string]any{"ttl": 1000}})
	if task.TaskId == "" || task.TaskId == "rec-1" {
		t.Fatalf("task id %q", task.TaskId)
	}
	r, err := tc.c.TaskResult(ctx, mgmcp.TaskResultRequest{Params: mgmcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(r)
	if !strings.Contains(string(raw), `"booked"`) || !strings.Contains(string(raw), task.TaskId) || strings.Contains(string(raw), "rec-1") {
		t.Errorf("tasks/result: %s", raw)
	}
	if ids := tc.statusNotes(); len(ids) != 1 || ids[0] != task.TaskId {
		t.Errorf("status notifications of %q, want one of %s", ids, task.TaskId)
	}
	mu.Lock()
	if len(mismatches) > 0 {
		t.Errorf("the reply with the live task id was taken for a mismatch: %+v", mismatches)
	}
	mu.Unlock()
	l, err := tc.c.ListTasks(ctx, mgmcp.ListTasksRequest{})
	if err != nil || len(l.Tasks) != 1 || l.Tasks[0].TaskId != task.TaskId || l.Tasks[0].Status != "input_required" {
		t.Errorf("tasks/list: %+v %v", l, err)
	}
}
