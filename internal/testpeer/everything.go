package testpeer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	protocol "github.com/mcpmock/mcpmock/internal/mcp"
	"io"
	"log"
	"log/slog"
	"net/http"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server kinds that behave as the MCP project's reference server,
// @modelcontextprotocol/server-everything, does where a replay must follow
// cause and effect (issue 19): what they send depends on what the client did
// before, not only on the request being answered.
//
//   - On notifications/initialized: notifications/tools/list_changed twice,
//     a roots/list request, then a notifications/message log "Roots updated:
//     N root(s)" that states the client's reply.
//   - On notifications/roots/list_changed: roots/list again, and the log of
//     the new count.
//   - The tool touch sends notifications/resources/updated for
//     [EverythingResourceURI], if the session subscribed to it, before its
//     answer "touched URI".
//   - The tool long_operation sends a progress notification for each of its
//     steps before its answer "long operation done".
//
// Each message is on the wire before the next is sent, so that a session
// has one order to compare: the go-sdk server sends them on its connection
// in turn; the mcp-go server, whose stdio and standalone streams write
// notifications from goroutines of their own, waits until each is written.
const (
	GoSDKEverything = "gosdk-everything"
	MCPGoEverything = "mcpgo-everything"
)

// EverythingKinds lists the server-everything look-alikes.
var EverythingKinds = []string{GoSDKEverything, MCPGoEverything}

// The tools, resource and texts of the server-everything look-alikes.
const (
	ToolTouch         = "touch"
	ToolLongOperation = "long_operation"
	// EverythingResourceURI is the resource that touch updates.
	EverythingResourceURI = "test://static/resource/1"
	touchedText           = "touched " + EverythingResourceURI
	longOperationText     = "long operation done"
	everythingLogger      = "everything"
)

// rootsText is the log message that states a roots/list reply.
func rootsText(n int) string { return fmt.Sprintf("Roots updated: %d root(s)", n) }

// effects runs what a server does because of a client notification, on
// goroutines of its own (a notification handler that waited for the
// client's reply to roots/list would stop the session's reading), and waits
// for them when the server stops.
type effects struct {
	ctx    context.Context // ends when the server stops
	cancel context.CancelFunc
	mu     sync.Mutex // guards stopped and wg.Add after stop
	wg     sync.WaitGroup
	// stopped is set by stop: no effect starts after it.
	stopped bool
}

func newEffects() *effects {
	ctx, cancel := context.WithCancel(context.Background())
	return &effects{ctx: ctx, cancel: cancel}
}

// run runs f on a goroutine of its own, with a context that ends when the
// server stops.
func (e *effects) run(f func(ctx context.Context)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		f(e.ctx)
	}()
}

// stop ends the effects in progress and waits for them.
func (e *effects) stop() {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.cancel()
	e.wg.Wait()
}

// subscriptions is the set of resources each session subscribed to, by
// session id.
type subscriptions struct {
	mu  sync.Mutex // guards uri
	uri map[string]map[string]bool
}

func (s *subscriptions) set(session, uri string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uri == nil {
		s.uri = map[string]map[string]bool{}
	}
	if s.uri[session] == nil {
		s.uri[session] = map[string]bool{}
	}
	s.uri[session][uri] = on
}

func (s *subscriptions) has(session, uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uri[session][uri]
}

// gosdkEverything is the go-sdk server-everything look-alike.
type gosdkEverything struct {
	srv *mcp.Server
	fx  *effects
	// send is the server's own sending handler, beneath any middleware:
	// it sends a notification on one session at once, where the go-sdk's
	// list-changed notifications wait on a timer and go to every session,
	// and its Log waits for logging/setLevel.
	send mcp.MethodHandler
	subs subscriptions
	// standalone, over HTTP, tells when a session's GET stream is open: the
	// go-sdk rejects a message for it before (nil on stdio).
	standalone *openStreams
}

func newGoSDKEverything(fx *effects, standalone *openStreams) *gosdkEverything {
	e := &gosdkEverything{fx: fx, standalone: standalone}
	e.srv = mcp.NewServer(&mcp.Implementation{Name: "testpeer-gosdk-everything", Version: "1.0.0"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			ss := req.Session
			fx.run(func(ctx context.Context) {
				if e.standalone != nil && e.standalone.wait(ctx, ss.ID()) != nil {
					return
				}
				for range 2 {
					if e.notify(ctx, ss, "notifications/tools/list_changed", &mcp.ToolListChangedParams{}) != nil {
						return
					}
				}
				e.reportRoots(ctx, ss)
			})
		},
		RootsListChangedHandler: func(_ context.Context, req *mcp.RootsListChangedRequest) {
			ss := req.Session
			fx.run(func(ctx context.Context) { e.reportRoots(ctx, ss) })
		},
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			e.subs.set(req.Session.ID(), req.Params.URI, true)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			e.subs.set(req.Session.ID(), req.Params.URI, false)
			return nil
		},
	})
	e.srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		e.send = next
		return next
	})
	e.srv.AddResource(&mcp.Resource{URI: EverythingResourceURI, Name: "resource 1", MIMEType: resourceMIMEType},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: resourceMIMEType, Text: resourceText}}}, nil
		})
	mcp.AddTool(e.srv, &mcp.Tool{Name: ToolTouch, Description: "Update the subscribed resource, then answer"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noIn) (*mcp.CallToolResult, any, error) {
			if e.subs.has(req.Session.ID(), EverythingResourceURI) {
				// ctx ties the notification to the call: over HTTP it goes
				// on the call's stream, before the answer.
				err := e.notify(ctx, req.Session, "notifications/resources/updated", &mcp.ResourceUpdatedNotificationParams{URI: EverythingResourceURI})
				if err != nil {
					return nil, nil, err
				}
			}
			return textResult(touchedText), nil, nil
		})
	mcp.AddTool(e.srv, &mcp.Tool{Name: ToolLongOperation, Description: "Report the progress of each step, then answer"},
		func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := 1; token != nil && i <= int(in.Steps); i++ {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(i), Total: in.Steps, Message: stepText(i, int(in.Steps)),
				})
				if err != nil {
					return nil, nil, err
				}
			}
			return textResult(longOperationText), nil, nil
		})
	return e
}

func stepText(i, n int) string { return fmt.Sprintf("step %d of %d", i, n) }

// notify sends a notification to one session, now.
func (e *gosdkEverything) notify(ctx context.Context, ss *mcp.ServerSession, method string, params mcp.Params) error {
	_, err := e.send(ctx, method, &mcp.ServerRequest[mcp.Params]{Session: ss, Params: params})
	return err
}

// reportRoots asks the client for its roots and logs how many it has.
func (e *gosdkEverything) reportRoots(ctx context.Context, ss *mcp.ServerSession) {
	res, err := ss.ListRoots(ctx, nil)
	text := ""
	if err != nil {
		text = "Roots request failed: " + err.Error()
	} else {
		text = rootsText(len(res.Roots))
	}
	e.notify(ctx, ss, "notifications/message", &mcp.LoggingMessageParams{Level: "info", Logger: everythingLogger, Data: text})
}

func serveGoSDKEverything(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	fx := newEffects()
	defer fx.stop()
	return newGoSDKEverything(fx, nil).srv.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

// mcpgoEverything is the mcp-go server-everything look-alike.
type mcpgoEverything struct {
	srv  *server.MCPServer
	fx   *effects
	wire *wireWatch
	subs subscriptions
	// standalone, over HTTP, tells when a session's GET stream is open:
	// mcp-go drops what it sends on its own before that.
	standalone *openStreams
	// sessions holds the sessions by id, for serveNotification.
	sessions sync.Map
}

func newMCPGoEverything(fx *effects, wire *wireWatch, standalone *openStreams) *mcpgoEverything {
	e := &mcpgoEverything{fx: fx, wire: wire, standalone: standalone}
	hooks := &server.Hooks{}
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcpgo.SubscribeRequest, _ *mcpgo.EmptyResult) {
		e.subs.set(sessionID(ctx), req.Params.URI, true)
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcpgo.UnsubscribeRequest, _ *mcpgo.EmptyResult) {
		e.subs.set(sessionID(ctx), req.Params.URI, false)
	})
	hooks.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) { e.sessions.Store(s.SessionID(), s) })
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { e.sessions.Delete(s.SessionID()) })
	e.srv = server.NewMCPServer("testpeer-mcpgo-everything", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, false),
		server.WithLogging(),
		server.WithHooks(hooks),
	)
	e.srv.AddNotificationHandler("notifications/initialized", func(ctx context.Context, _ mcpgo.JSONRPCNotification) {
		ctx = context.WithoutCancel(ctx) // keeps the session, outlives the message
		fx.run(func(stop context.Context) {
			ctx, cancel := context.WithCancel(ctx)
			defer context.AfterFunc(stop, cancel)()
			if e.standalone != nil && e.standalone.wait(ctx, sessionID(ctx)) != nil {
				return
			}
			for range 2 {
				if e.notify(ctx, "notifications/tools/list_changed", nil) != nil {
					return
				}
			}
			e.reportRoots(ctx)
		})
	})
	e.srv.AddNotificationHandler("notifications/roots/list_changed", func(ctx context.Context, _ mcpgo.JSONRPCNotification) {
		ctx = context.WithoutCancel(ctx)
		fx.run(func(stop context.Context) {
			ctx, cancel := context.WithCancel(ctx)
			defer context.AfterFunc(stop, cancel)()
			e.reportRoots(ctx)
		})
	})
	e.srv.AddResource(mcpgo.NewResource(EverythingResourceURI, "resource 1", mcpgo.WithMIMEType(resourceMIMEType)),
		func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: resourceMIMEType, Text: resourceText}}, nil
		})
	e.srv.AddTool(mcpgo.NewTool(ToolTouch, mcpgo.WithDescription("Update the subscribed resource, then answer")),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if e.subs.has(sessionID(ctx), EverythingResourceURI) {
				if err := e.notify(ctx, "notifications/resources/updated", map[string]any{"uri": EverythingResourceURI}); err != nil {
					return nil, err
				}
			}
			return mcpgo.NewToolResultText(touchedText), nil
		})
	e.srv.AddTool(mcpgo.NewTool(ToolLongOperation,
		mcpgo.WithDescription("Report the progress of each step, then answer"),
		mcpgo.WithNumber("steps", mcpgo.Description("how many progress notifications to send")),
	), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		steps := int(req.GetFloat("steps", 0))
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			for i := 1; i <= steps; i++ {
				err := e.notify(ctx, "notifications/progress", map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": steps, "message": stepText(i, steps),
				})
				if err != nil {
					return nil, err
				}
			}
		}
		return mcpgo.NewToolResultText(longOperationText), nil
	})
	return e
}

func sessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// notify sends a notification to the session of ctx and waits until it is
// written.
func (e *mcpgoEverything) notify(ctx context.Context, method string, params map[string]any) error {
	n := e.wire.count(method)
	if err := e.srv.SendNotificationToClient(ctx, method, params); err != nil {
		return err
	}
	return e.wire.wait(ctx, method, n+1)
}

// reportRoots asks the client of ctx for its roots and logs how many it
// has.
func (e *mcpgoEverything) reportRoots(ctx context.Context) {
	res, err := e.srv.RequestRoots(ctx, mcpgo.ListRootsRequest{})
	text := ""
	if err != nil {
		text = "Roots request failed: " + err.Error()
	} else {
		text = rootsText(len(res.Roots))
	}
	e.notify(ctx, "notifications/message", map[string]any{"level": "info", "logger": everythingLogger, "data": text})
}

func serveMCPGoEverything(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	mcpgoStdioMu.Lock()
	defer mcpgoStdioMu.Unlock()
	fx := newEffects()
	defer fx.stop()
	wire := &wireWatch{}
	ss := server.NewStdioServer(newMCPGoEverything(fx, wire, nil).srv)
	ss.SetErrorLogger(log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { r.Close() })
	defer stop()
	return ss.Listen(ctx, r, watchedWriter{w, wire})
}

// EverythingHTTPServer is a server-everything look-alike over Streamable
// HTTP, stateful, at /mcp; the go-sdk one keeps its events in memory, so
// that its streams can be resumed. Close stops the effects in progress; call it
// after closing the HTTP server that serves it.
type EverythingHTTPServer struct {
	http.Handler
	fx *effects
}

// NewEverythingHTTP returns the server-everything look-alike of the given
// kind ([GoSDKEverything] or [MCPGoEverything]) over HTTP.
func NewEverythingHTTP(kind string) (*EverythingHTTPServer, error) {
	fx := newEffects()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	switch kind {
	case GoSDKEverything:
		streams := &openStreams{}
		e := newGoSDKEverything(fx, streams)
		// An event store, as server-everything has: streams carry event
		// ids and can be resumed.
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return e.srv }, &mcp.StreamableHTTPOptions{
			Logger: quiet, EventStore: mcp.NewMemoryEventStore(nil),
		})
		mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if sid := r.Header.Get(protocol.HeaderSessionID); r.Method == http.MethodGet && sid != "" {
				w = &firstWrite{ResponseWriter: w, f: func() { streams.opened(sid) }}
			}
			h.ServeHTTP(w, r)
		}))
	case MCPGoEverything:
		wire, streams := &wireWatch{}, &openStreams{}
		e := newMCPGoEverything(fx, wire, streams)
		h := server.NewStreamableHTTPServer(e.srv, server.WithStateful(true), server.WithStreamableHTTPLogger(quiet))
		mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w = &watchedResponse{w, wire}
			sid := r.Header.Get(protocol.HeaderSessionID)
			switch {
			case sid == "":
			case r.Method == http.MethodGet:
				w = &firstWrite{ResponseWriter: w, f: func() { streams.opened(sid) }}
			case r.Method == http.MethodPost && e.serveNotification(w, r, sid):
				return
			}
			h.ServeHTTP(w, r)
		}))
	default:
		fx.stop()
		return nil, fmt.Errorf("testpeer: no server-everything look-alike of kind %q (want one of %q)", kind, EverythingKinds)
	}
	return &EverythingHTTPServer{Handler: mux, fx: fx}, nil
}

// serveNotification answers a POST of a client notification in session sid
// 202 Accepted, then hands the notification to the server, and tells
// whether it did; it leaves any other POST, with its body, to mcp-go.
// mcp-go (v1.2.1) serves a notification's POST with a goroutine that takes
// what the session sends from the queue its GET stream reads too, and that
// goroutine, left running after the answer, drops what it takes; or it puts
// that on the POST's answer, which a client drops unread (go-sdk closes
// it). Either way what notifications/initialized causes could be lost.
func (e *mcpgoEverything) serveNotification(w http.ResponseWriter, r *http.Request, sid string) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	session, ok := e.sessions.Load(sid)
	if !ok || json.Unmarshal(body, &msg) != nil || msg.ID != nil || msg.Method == "" {
		return false
	}
	w.WriteHeader(http.StatusAccepted)
	http.NewResponseController(w).Flush()
	e.srv.HandleMessage(e.srv.WithContext(r.Context(), session.(server.ClientSession)), body)
	return true
}

// Close stops the effects in progress and waits for them.
func (s *EverythingHTTPServer) Close() { s.fx.stop() }
