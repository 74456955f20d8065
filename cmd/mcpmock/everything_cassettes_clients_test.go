package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The clients of TestEverythingCassettes: go-sdk and mcp-go.

func base64Of(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// errorCodeOf is the JSON-RPC code of an error a client returned, when the
// library keeps it, and its data when the library keeps that but not the
// message.
func errorCodeOf(err error) (code int, data any, ok bool) {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return int(we.Code), nil, true
	}
	// mcp-go replaces the message of -32042 by its own.
	var ue mcpgo.URLElicitationRequiredError
	if errors.As(err, &ue) {
		return mcpgo.URL_ELICITATION_REQUIRED, map[string]any{"elicitations": ue.Elicitations}, true
	}
	return 0, nil, false
}

// evRootsState is a client's roots, answered to roots/list.
type evRootsState struct {
	mu    sync.Mutex // guards roots
	roots []evRoot
}

func (s *evRootsState) set(r []evRoot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roots = r
}

func (s *evRootsState) get() []evRoot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roots
}

// go-sdk v1.8.0 has no tasks: its InitializeResult drops the server's
// tasks capability and its Tool the execution member (taskSupport).
var goSDKLibrary = evLibrary{name: "go-sdk", connect: connectEvGoSDK, drops: map[string]bool{"tasks": true, "execution": true},
	// go-sdk fills in the defaults of the requested schema's properties
	// that the handler's content lacks (the TS SDK does not).
	replyDiff: `content.legacyTitledEnum: not recorded, live has "pet-1"; content.titledMultipleSelectEnum: not recorded, live has ["fish-1"]; content.titledSingleSelectEnum: not recorded, live has "hero-1"; content.untitledMultipleSelectEnum: not recorded, live has ["Guitar"]`,
}

type goSDKConn struct {
	client   *mcp.Client
	cs       *mcp.ClientSession
	roots    *evRootsState
	log      *evLogs
	progress *evProgress
}

func connectEvGoSDK(t *testing.T, ctx context.Context, r io.ReadCloser, w io.WriteCloser, url string) evConn {
	t.Helper()
	c := &goSDKConn{roots: &evRootsState{roots: evInitialRoots}, log: &evLogs{}, progress: &evProgress{}}
	c.client = mcp.NewClient(&mcp.Implementation{Name: "mcpmock-everything-go-sdk", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: evSamplingText}, Model: evSamplingModel, StopReason: "endTurn"}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			p, err := json.Marshal(req.Params)
			if err != nil {
				return nil, err
			}
			action, content := evElicitReply(p)
			return &mcp.ElicitResult{Action: action, Content: content}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.log.add("notifications/message", req.Params.Data)
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			c.log.add("notifications/progress", nil)
			c.progress.add()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.log.add("notifications/tools/list_changed", nil) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			c.log.add("notifications/resources/list_changed", nil)
		},
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			c.log.add("notifications/resources/updated", nil)
		},
	})
	// go-sdk answers roots/list from roots that AddRoots and RemoveRoots
	// change, each sending notifications/roots/list_changed: this answers
	// it from c.roots instead, so that a change of all roots is one
	// notification, as with the TS client.
	c.client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			res := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
			for _, r := range c.roots.get() {
				res.Roots = append(res.Roots, &mcp.Root{URI: r.uri, Name: r.name})
			}
			return res, nil
		}
	})
	var transport mcp.Transport
	if url == "" {
		transport = &mcp.IOTransport{Reader: r, Writer: w}
	} else {
		transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: evHTTPClient(t)}
	}
	cs, err := c.client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("go-sdk client: connect: %v", err)
	}
	c.cs = cs
	return c
}

func (c *goSDKConn) initializeResult() any { return c.cs.InitializeResult() }
func (c *goSDKConn) listTools(ctx context.Context) (any, error) {
	return c.cs.ListTools(ctx, &mcp.ListToolsParams{})
}
func (c *goSDKConn) setLevel(ctx context.Context, level string) error {
	return c.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)})
}
func (c *goSDKConn) ping(ctx context.Context) error { return c.cs.Ping(ctx, nil) }
func (c *goSDKConn) callTool(ctx context.Context, name string, args map[string]any, progress int) (any, error) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if progress > 0 {
		p.SetProgressToken("go-sdk-progress")
	}
	r, err := c.cs.CallTool(ctx, p)
	if err == nil && progress > 0 {
		err = c.progress.wait(ctx, progress)
	}
	return r, err
}
func (c *goSDKConn) changeRoots(ctx context.Context, roots []evRoot) error {
	c.roots.set(roots)
	// The root added is never listed (the middleware answers roots/list):
	// it only makes go-sdk send notifications/roots/list_changed.
	c.client.AddRoots(&mcp.Root{URI: "file:///go-sdk/notify"})
	return nil
}
func (c *goSDKConn) listResources(ctx context.Context, cursor string) (any, string, error) {
	r, err := c.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	return r, r.NextCursor, nil
}
func (c *goSDKConn) listTemplates(ctx context.Context) (any, error) {
	return c.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{})
}
func (c *goSDKConn) read(ctx context.Context, uri string) (any, error) {
	return c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
}
func (c *goSDKConn) subscribe(ctx context.Context, uri string) error {
	return c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
}
func (c *goSDKConn) unsubscribe(ctx context.Context, uri string) error {
	return c.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
}
func (c *goSDKConn) listPrompts(ctx context.Context) (any, error) {
	return c.cs.ListPrompts(ctx, &mcp.ListPromptsParams{})
}
func (c *goSDKConn) getPrompt(ctx context.Context, name string, args map[string]string) (any, error) {
	return c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
}
func (c *goSDKConn) complete(ctx context.Context, refType, ref, arg, value string, context map[string]string) (any, error) {
	p := &mcp.CompleteParams{Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}, Ref: &mcp.CompleteReference{Type: refType}}
	if refType == "ref/prompt" {
		p.Ref.Name = ref
	} else {
		p.Ref.URI = ref
	}
	if context != nil {
		p.Context = &mcp.CompleteContext{Arguments: context}
	}
	return c.cs.Complete(ctx, p)
}
func (c *goSDKConn) logs() ([]string, <-chan struct{}) { return c.log.get() }
func (c *goSDKConn) tasks() evTasks                    { return nil }
func (c *goSDKConn) close() error                      { return c.cs.Close() }

// mcp-go v1.2.1's ToolInputSchema and ToolOutputSchema drop a schema's
// $schema.
var mcpgoLibrary = evLibrary{name: "mcp-go", connect: connectEvMCPGo, drops: map[string]bool{"$schema": true}}

type mcpgoConn struct {
	c        *mcpgoclient.Client
	t        mcpgotransport.Interface
	init     *mcpgo.InitializeResult
	taskID   string // of the task that evTaskSteps start
	roots    *evRootsState
	log      *evLogs
	progress *evProgress
}

type mcpgoHandlers struct{ roots *evRootsState }

func (h mcpgoHandlers) ListRoots(context.Context, mcpgo.ListRootsRequest) (*mcpgo.ListRootsResult, error) {
	res := &mcpgo.ListRootsResult{Roots: []mcpgo.Root{}}
	for _, r := range h.roots.get() {
		res.Roots = append(res.Roots, mcpgo.Root{URI: r.uri, Name: r.name})
	}
	return res, nil
}

func (h mcpgoHandlers) CreateMessage(context.Context, mcpgo.CreateMessageRequest) (*mcpgo.CreateMessageResult, error) {
	return &mcpgo.CreateMessageResult{
		SamplingMessage: mcpgo.SamplingMessage{Role: mcpgo.RoleAssistant, Content: mcpgo.TextContent{Type: "text", Text: evSamplingText}},
		Model:           evSamplingModel,
		StopReason:      "endTurn",
	}, nil
}

func (h mcpgoHandlers) Elicit(_ context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	p, err := json.Marshal(req.Params)
	if err != nil {
		return nil, err
	}
	action, content := evElicitReply(p)
	res := &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseAction(action)}}
	if content != nil {
		res.Content = content
	}
	return res, nil
}

func connectEvMCPGo(t *testing.T, ctx context.Context, r io.ReadCloser, w io.WriteCloser, url string) evConn {
	t.Helper()
	c := &mcpgoConn{roots: &evRootsState{roots: evInitialRoots}, log: &evLogs{}, progress: &evProgress{}}
	if url == "" {
		t.Cleanup(func() { r.Close() }) // the mcp-go transport closes w, not r
		c.t = mcpgotransport.NewIO(r, w, nil)
	} else {
		tr, err := mcpgotransport.NewStreamableHTTP(url,
			mcpgotransport.WithHTTPBasicClient(evHTTPClient(t)),
			mcpgotransport.WithContinuousListening(),
			mcpgotransport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatalf("mcp-go client: %v", err)
		}
		c.t = tr
	}
	h := mcpgoHandlers{c.roots}
	c.c = mcpgoclient.NewClient(c.t, mcpgoclient.WithRootsHandler(h), mcpgoclient.WithSamplingHandler(h), mcpgoclient.WithElicitationHandler(h))
	c.c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		switch n.Method {
		case "notifications/message":
			c.log.add(n.Method, n.Params.AdditionalFields["data"])
		case "notifications/progress":
			c.log.add(n.Method, nil)
			c.progress.add()
		default:
			c.log.add(n.Method, nil)
		}
	})
	if err := c.c.Start(ctx); err != nil {
		t.Fatalf("mcp-go client: start: %v", err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcpgo.Implementation{Name: "mcpmock-everything-mcp-go", Version: "1.0.0"}
	init.Params.Capabilities.Roots = &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}
	init.Params.Capabilities.Sampling = &mcpgo.SamplingCapability{}
	init.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	res, err := c.c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("mcp-go client: initialize: %v", err)
	}
	c.init = res
	return c
}

func (c *mcpgoConn) initializeResult() any { return c.init }
func (c *mcpgoConn) listTools(ctx context.Context) (any, error) {
	return c.c.ListToolsByPage(ctx, mcpgo.ListToolsRequest{})
}
func (c *mcpgoConn) setLevel(ctx context.Context, level string) error {
	var r mcpgo.SetLevelRequest
	r.Params.Level = mcpgo.LoggingLevel(level)
	return c.c.SetLevel(ctx, r)
}
func (c *mcpgoConn) ping(ctx context.Context) error { return c.c.Ping(ctx) }
func (c *mcpgoConn) callTool(ctx context.Context, name string, args map[string]any, progress int) (any, error) {
	var r mcpgo.CallToolRequest
	r.Params.Name = name
	r.Params.Arguments = args
	if progress > 0 {
		r.Params.Meta = &mcpgo.Meta{ProgressToken: "mcp-go-progress"}
	}
	res, err := c.c.CallTool(ctx, r)
	if err == nil && progress > 0 {
		err = c.progress.wait(ctx, progress)
	}
	return res, err
}
func (c *mcpgoConn) changeRoots(ctx context.Context, roots []evRoot) error {
	c.roots.set(roots)
	return c.c.RootListChanges(ctx)
}
func (c *mcpgoConn) listResources(ctx context.Context, cursor string) (any, string, error) {
	var r mcpgo.ListResourcesRequest
	r.Params.Cursor = mcpgo.Cursor(cursor)
	res, err := c.c.ListResourcesByPage(ctx, r)
	if err != nil {
		return nil, "", err
	}
	return res, string(res.NextCursor), nil
}
func (c *mcpgoConn) listTemplates(ctx context.Context) (any, error) {
	return c.c.ListResourceTemplatesByPage(ctx, mcpgo.ListResourceTemplatesRequest{})
}
func (c *mcpgoConn) read(ctx context.Context, uri string) (any, error) {
	var r mcpgo.ReadResourceRequest
	r.Params.URI = uri
	return c.c.ReadResource(ctx, r)
}

// raw sends a request mcp-go's client has no method for through its
// transport, as the TS client sends it.
func (c *mcpgoConn) raw(ctx context.Context, id int64, method string, params any) error {
	res, err := c.t.SendRequest(ctx, mcpgotransport.JSONRPCRequest{JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(id), Method: method, Params: params})
	if err != nil {
		return err
	}
	if res.Error != nil {
		return res.Error.AsError()
	}
	if string(res.Result) != "{}" {
		return fmt.Errorf("%s: got %s, want {}", method, res.Result)
	}
	return nil
}
func (c *mcpgoConn) subscribe(ctx context.Context, uri string) error {
	return c.raw(ctx, 1_000_001, "resources/subscribe", map[string]any{"uri": uri})
}
func (c *mcpgoConn) unsubscribe(ctx context.Context, uri string) error {
	return c.raw(ctx, 1_000_002, "resources/unsubscribe", map[string]any{"uri": uri})
}
func (c *mcpgoConn) listPrompts(ctx context.Context) (any, error) {
	return c.c.ListPromptsByPage(ctx, mcpgo.ListPromptsRequest{})
}
func (c *mcpgoConn) getPrompt(ctx context.Context, name string, args map[string]string) (any, error) {
	var r mcpgo.GetPromptRequest
	r.Params.Name = name
	r.Params.Arguments = args
	return c.c.GetPrompt(ctx, r)
}
func (c *mcpgoConn) complete(ctx context.Context, refType, ref, arg, value string, context map[string]string) (any, error) {
	var r mcpgo.CompleteRequest
	if refType == "ref/prompt" {
		r.Params.Ref = mcpgo.PromptReference{Type: refType, Name: ref}
	} else {
		r.Params.Ref = mcpgo.ResourceReference{Type: refType, URI: ref}
	}
	r.Params.Argument.Name = arg
	r.Params.Argument.Value = value
	r.Params.Context.Arguments = context
	return c.c.Complete(ctx, r)
}
func (c *mcpgoConn) logs() ([]string, <-chan struct{}) { return c.log.get() }
func (c *mcpgoConn) tasks() evTasks                    { return (*mcpgoTasks)(c) }
func (c *mcpgoConn) close() error                      { return c.c.Close() }

// mcpgoTasks are the task requests of an mcp-go client.
type mcpgoTasks mcpgoConn

// call sends tools/call with a task through the transport: mcp-go's
// CallTool parses the answer as a CallToolResult, which drops the task.
func (c *mcpgoTasks) call(ctx context.Context, name string, args map[string]any, ttl int64) (any, error) {
	res, err := c.t.SendRequest(ctx, mcpgotransport.JSONRPCRequest{
		JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(int64(1_000_003)), Method: "tools/call",
		Params: map[string]any{"name": name, "arguments": args, "task": mcpgo.TaskParams{TTL: &ttl}},
	})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, res.Error.AsError()
	}
	var r mcpgo.CreateTaskResult
	if err := json.Unmarshal(res.Result, &r); err != nil {
		return nil, err
	}
	c.taskID = r.Task.TaskId
	return r, nil
}

func (c *mcpgoTasks) result(ctx context.Context) (any, error) {
	var r mcpgo.TaskResultRequest
	r.Params.TaskId = c.taskID
	return c.c.TaskResult(ctx, r)
}

func (c *mcpgoTasks) get(ctx context.Context) (any, error) {
	var r mcpgo.GetTaskRequest
	r.Params.TaskId = c.taskID
	return c.c.GetTask(ctx, r)
}

func (c *mcpgoTasks) list(ctx context.Context) (any, error) {
	return c.c.ListTasksByPage(ctx, mcpgo.ListTasksRequest{})
}
