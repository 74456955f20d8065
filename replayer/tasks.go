package replayer

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// markTaskID finds the "taskId" of a message quickly (jsonrpc.Marker).
var markTaskID = jsonrpc.NewMarker(`"taskId"`)

// This file maps the task ids of 2025-11-25 tasks between the recording and
// the live client. A replayed CreateTaskResult (the answer to a
// task-augmented request) hands the client a fresh task id; tasks/get,
// tasks/result and tasks/cancel with it are matched as the recorded
// requests of the recorded id; every task id the replay sends (results,
// notifications/tasks/status, the io.modelcontextprotocol/related-task
// _meta of messages that belong to a task) is the live one; tasks/list
// lists the session's live tasks.

// taskMap is a session's task ids.
type taskMap struct {
	toRec  map[string]string          // live → recorded
	toLive map[string]string          // recorded → the latest live id made from it
	order  []string                   // live ids, in creation order
	last   map[string]json.RawMessage // live id → the last Task object sent
}

// newTaskID is a fresh task id, shaped as a random UUID.
func newTaskID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// stringAt returns the string at path in raw, if there is one.
func stringAt(raw json.RawMessage, path ...string) (string, bool) {
	for _, k := range path {
		if len(raw) == 0 || raw[0] != '{' {
			return "", false
		}
		v, err := jsonrpc.Member(raw, k)
		if err != nil || v == nil {
			return "", false
		}
		raw = v
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// taskIn returns the live request with its taskId turned into the recorded
// one (for tasks/get, tasks/result and tasks/cancel), and whether the
// session knows the live id.
func (s *session) taskIn(msg *jsonrpc.Message) (*jsonrpc.Message, bool) {
	if !mcp.TaskMethod(msg.Method) {
		return msg, true
	}
	live, ok := stringAt(msg.Params, "taskId")
	if !ok {
		return msg, true
	}
	s.mu.Lock()
	rec, known := s.tasks.toRec[live]
	s.mu.Unlock()
	if !known || rec == live {
		return msg, known
	}
	params, err := jsonrpc.SetMember(msg.Params, mustJSON(rec), "taskId")
	if err != nil {
		return msg, known
	}
	m, err := jsonrpc.Parse(jsonrpc.Request(msg.ID, msg.Method, params))
	if err != nil {
		return msg, known
	}
	return m, true
}

// taskOut rewrites the task ids of a plan's messages to the live ones,
// making a live id for a replayed CreateTaskResult. A tasks/get,
// tasks/result or tasks/cancel of a task the session does not know, that
// nothing recorded answers, gets -32602 as from a real server.
func (s *session) taskOut(msg *jsonrpc.Message, plan *answerPlan, known bool) *answerPlan {
	if mcp.TaskMethod(msg.Method) && !known {
		// A miss, or the recorded id of a task this session did not make
		// (answered before matching, by Session.Handle): not found.
		id, _ := stringAt(msg.Params, "taskId")
		if plan == nil || plan.Miss != nil || s.e.recordedTaskIDs()[id] {
			out := &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
				Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"})}}}
			if plan != nil {
				out.Miss = plan.Miss
			}
			return out
		}
	}
	// The common case: nothing about tasks.
	found := false
	for _, st := range plan.Steps {
		if st.Kind == stepSend && markTaskID.In(st.Message) {
			found = true
			break
		}
	}
	if !found {
		return plan
	}
	// A CreateTaskResult makes a new live task.
	for _, st := range plan.Steps {
		if !st.Response || st.Kind != stepSend {
			continue
		}
		if rec, ok := stringAt(st.Message, "result", "task", "taskId"); ok {
			live := newTaskID()
			s.mu.Lock()
			if s.tasks.toRec == nil {
				s.tasks = taskMap{toRec: map[string]string{}, toLive: map[string]string{}, last: map[string]json.RawMessage{}}
			}
			s.tasks.toRec[live] = rec
			s.tasks.toLive[rec] = live
			s.tasks.order = append(s.tasks.order, live)
			s.mu.Unlock()
		}
	}
	for i := range plan.Steps {
		st := &plan.Steps[i]
		if st.Kind != stepSend || !markTaskID.In(st.Message) {
			continue
		}
		if st.Response && msg.Method == "tasks/list" {
			st.Message = s.liveTaskList(st.Message)
			continue
		}
		st.Message = s.retask(st.Message)
	}
	return plan
}

// unknownTask reports whether msg names, by its taskId, a task that the
// recording made but this session did not: no recorded answer is its.
func (s *session) unknownTask(msg *jsonrpc.Message, known bool) bool {
	if known || !mcp.TaskMethod(msg.Method) {
		return false
	}
	id, _ := stringAt(msg.Params, "taskId")
	return s.e.recordedTaskIDs()[id]
}

// taskPaths are where a message names its task.
var taskPaths = [][]string{
	{"result", "task", "taskId"},                       // CreateTaskResult
	{"result", "taskId"},                               // tasks/get, tasks/cancel
	{"result", "_meta", mcp.MetaRelatedTask, "taskId"}, // tasks/result and other results
	{"params", "taskId"},                               // notifications/tasks/status
	{"params", "_meta", mcp.MetaRelatedTask, "taskId"}, // requests and notifications of a task
}

// taskObjects are the paths of full Task objects, kept for tasks/list.
var taskObjects = map[int][]string{0: {"result", "task"}, 1: {"result"}, 3: {"params"}}

// retask turns the recorded task ids of one message into live ones.
func (s *session) retask(raw []byte) []byte {
	for n, path := range taskPaths {
		rec, ok := stringAt(raw, path...)
		if !ok {
			continue
		}
		s.mu.Lock()
		live, mapped := s.tasks.toLive[rec]
		s.mu.Unlock()
		if !mapped {
			continue
		}
		out, err := jsonrpc.SetMember(raw, mustJSON(live), path...)
		if err != nil {
			continue
		}
		raw = out
		if obj := taskObjects[n]; obj != nil {
			if v := memberAt(raw, obj...); v != nil {
				if _, ok := stringAt(v, "status"); ok {
					s.mu.Lock()
					s.tasks.last[live] = append(json.RawMessage(nil), v...)
					s.mu.Unlock()
				}
			}
		}
	}
	return raw
}

func memberAt(raw json.RawMessage, path ...string) json.RawMessage {
	for _, k := range path {
		if len(raw) == 0 || raw[0] != '{' {
			return nil
		}
		v, err := jsonrpc.Member(raw, k)
		if err != nil {
			return nil
		}
		raw = v
	}
	return raw
}

// recordedTaskIDs are the task ids the recording's CreateTaskResults made.
func (e *Engine) recordedTaskIDs() map[string]bool {
	e.tasksOnce.Do(func() {
		e.taskIDs = map[string]bool{}
		for i := range e.cassette.Interactions {
			in := &e.cassette.Interactions[i]
			if in.Response == nil || !bytes.Contains(in.Response.Message, []byte(`"taskId"`)) {
				continue
			}
			if id, ok := stringAt(in.Response.Message, "result", "task", "taskId"); ok {
				e.taskIDs[id] = true
			}
		}
	})
	return e.taskIDs
}

// liveTaskList turns a recorded tasks/list answer into the session's: each
// recorded task the session made is listed under its live id(s); recorded
// tasks that the recording made and this session did not are left out;
// the session's tasks that the recorded list lacks are added as last seen.
func (s *session) liveTaskList(raw []byte) []byte {
	result := memberAt(raw, "result")
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return raw
	}
	var recTasks []json.RawMessage
	json.Unmarshal(r["tasks"], &recTasks)
	made := s.e.recordedTaskIDs()
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := map[string]bool{}
	tasks := []json.RawMessage{}
	for _, t := range recTasks {
		rec, ok := stringAt(t, "taskId")
		if _, live := s.tasks.toRec[rec]; !ok || live {
			listed[rec] = ok
			tasks = append(tasks, t) // no id, or already the live one
			continue
		}
		found := false
		for _, live := range s.tasks.order {
			if s.tasks.toRec[live] != rec || listed[live] {
				continue
			}
			found = true
			listed[live] = true
			if out, err := jsonrpc.SetMember(t, mustJSON(live), "taskId"); err == nil {
				tasks = append(tasks, out)
			}
		}
		if !found && !made[rec] {
			tasks = append(tasks, t) // not a task the recording made: as recorded
		}
	}
	for _, live := range s.tasks.order {
		if !listed[live] && s.tasks.last[live] != nil {
			tasks = append(tasks, s.tasks.last[live])
		}
	}
	r["tasks"], _ = json.Marshal(tasks)
	newResult, _ := json.Marshal(r)
	out, err := jsonrpc.SetMember(raw, newResult, "result")
	if err != nil {
		return raw
	}
	return out
}

// synthesizeTaskList answers tasks/list when the cassette holds none: the
// session's live tasks as last seen.
func (s *session) synthesizeTaskList(msg *jsonrpc.Message) *answerPlan {
	s.mu.Lock()
	tasks := []json.RawMessage{}
	for _, live := range s.tasks.order {
		if t := s.tasks.last[live]; t != nil {
			tasks = append(tasks, t)
		}
	}
	n := len(s.tasks.order)
	s.mu.Unlock()
	if n == 0 && !s.e.caps.tasksList {
		return nil
	}
	result, _ := json.Marshal(map[string]any{"tasks": tasks})
	return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.Response(msg.ID, result)}}}
}

// taskBack turns the live task ids of a client's reply body (its
// related-task _meta) back into recorded ones, for comparison.
func (s *session) taskBack(body json.RawMessage) json.RawMessage {
	if !bytes.Contains(body, []byte(mcp.MetaRelatedTask)) {
		return body
	}
	live, ok := stringAt(body, "_meta", mcp.MetaRelatedTask, "taskId")
	if !ok {
		return body
	}
	s.mu.Lock()
	rec, known := s.tasks.toRec[live]
	s.mu.Unlock()
	if !known {
		return body
	}
	if out, err := jsonrpc.SetMember(body, mustJSON(rec), "_meta", mcp.MetaRelatedTask, "taskId"); err == nil {
		return out
	}
	return body
}
