package replayer_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// mrtrURLServer is a real go-sdk server of 2026-07-28 whose pay tool asks
// for a URL-mode elicitation inside an input_required result, keeping its
// id in requestState, and on the retry says that elicitation completed.
// 2026-07-28 removed elicitationId and notifications/elicitation/complete,
// but the go-sdk (v1.8.0) sends both: a recording of such a server holds
// them.
func mrtrURLServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr-url-server", Version: "1"}, nil)
	type noIn struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "pay"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		if req.Params.RequestState == "" {
			id := rand.Text()
			return &mcp.CallToolResult{RequestState: "awaiting:" + id, InputRequests: mcp.InputRequestMap{"checkout": &mcp.ElicitParams{
				Mode: "url", ElicitationID: id, URL: "https://pay.example/checkout?elicitation=" + id, Message: "pay"}}}, nil, nil
		}
		res, ok := req.Params.InputResponses["checkout"].(*mcp.ElicitResult)
		if !ok {
			return nil, nil, fmt.Errorf("no checkout response in %v", req.Params.InputResponses)
		}
		if res.Action == "accept" {
			id := strings.TrimPrefix(req.Params.RequestState, "awaiting:")
			req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "paid after " + res.Action}}}, nil, nil
	})
	return s
}

// gatedClient is urlClient's go-sdk client whose elicitation handler
// first calls gate.
func (uc *urlClient) gatedClient(gate func()) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "url-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			uc.asked <- req.Params
			gate()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			uc.complete <- req.Params.ElicitationID
		},
	})
}

// payScript calls pay (the go-sdk client answers the input request and
// retries) and says what it saw, with the elicitationId it was handed.
func (uc *urlClient) payScript(out *string, id *string) func(context.Context, *mcp.ClientSession) error {
	return func(ctx context.Context, cs *mcp.ClientSession) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay"})
		if err != nil {
			return err
		}
		var asked *mcp.ElicitParams
		select {
		case asked = <-uc.asked:
		default:
			return fmt.Errorf("pay answered %v without asking", res.Content)
		}
		var done string
		select {
		case done = <-uc.complete:
		case <-ctx.Done():
			return fmt.Errorf("no notifications/elicitation/complete")
		}
		*id = asked.ElicitationID
		*out = fmt.Sprintf("%s: asked %s, has an id %v, url has its id %v, completed the same %v", res.Content[0].(*mcp.TextContent).Text, asked.Mode,
			asked.ElicitationID != "", strings.HasSuffix(asked.URL, "="+asked.ElicitationID), done == asked.ElicitationID)
		return nil
	}
}

// A URL-mode elicitation inside a 2026-07-28 input_required result,
// recorded from a real go-sdk server, replays to two concurrent go-sdk
// clients of one replay, over stdio and Streamable HTTP: each gets an
// elicitationId of its own (in its url too), never the recorded one, its
// retry is paired with the recorded retry, and the completion the retry
// brings names the id that client was handed, though both retries carry
// what they were handed as requestState and the two elicitations were
// handed out before either retry.
func TestURLElicitationInputRequired(t *testing.T) {
	const version = "2026-07-28"
	var live, recorded string
	uc := newURLClient()
	c := recordGoSDK(t, mrtrURLServer(), uc.client(), version, uc.payScript(&live, &recorded))
	if live != "paid after accept: asked url, has an id true, url has its id true, completed the same true" {
		t.Fatalf("live: %q", live)
	}
	for _, overHTTP := range []bool{false, true} {
		const clients = 2
		got, ids := make([]string, clients), make([]string, clients)
		// Each client answers its elicitation once both were asked: the
		// two input_required results go out before either retry.
		var asked sync.WaitGroup
		asked.Add(clients)
		gate := func() { asked.Done(); asked.Wait() }
		replayConcurrently(t, c, overHTTP, clients, func(ctx context.Context, i int, tr mcp.Transport) error {
			uc := newURLClient()
			cs, err := uc.gatedClient(gate).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				return err
			}
			defer cs.Close()
			return uc.payScript(&got[i], &ids[i])(ctx, cs)
		})
		checkFresh(t, overHTTP, live, got, []string{recorded}, ids)
	}
}

// A -32042 (URL elicitation required) of a real go-sdk server recorded in
// 2026-07-28 (which no longer defines the code, but the go-sdk still
// sends it) replays to two concurrent go-sdk clients, over stdio and
// Streamable HTTP, each with an elicitationId of its own (in its url too).
func TestURLElicitationRequiredInputRequiredEra(t *testing.T) {
	const version = "2026-07-28"
	fetch := func(out, id *string) func(context.Context, *mcp.ClientSession) error {
		return func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch"})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				return fmt.Errorf("fetch: %v, want -32042", err)
			}
			var data struct {
				Elicitations []*mcp.ElicitParams `json:"elicitations"`
			}
			if json.Unmarshal(rpcErr.Data, &data); len(data.Elicitations) != 1 {
				return fmt.Errorf("fetch: %s", rpcErr.Data)
			}
			el := data.Elicitations[0]
			*id = el.ElicitationID
			*out = fmt.Sprintf("fetch error %d: %s, url has its id %v", rpcErr.Code, el.Mode, strings.HasSuffix(el.URL, "="+el.ElicitationID))
			return nil
		}
	}
	var live, recorded string
	c := recordGoSDK(t, urlServer(), newURLClient().client(), version, fetch(&live, &recorded))
	if live != "fetch error -32042: url, url has its id true" {
		t.Fatalf("live: %q", live)
	}
	for _, overHTTP := range []bool{false, true} {
		got, ids := make([]string, 2), make([]string, 2)
		replayConcurrently(t, c, overHTTP, 2, func(ctx context.Context, i int, tr mcp.Transport) error {
			cs, err := newURLClient().client().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				return err
			}
			defer cs.Close()
			return fetch(&got[i], &ids[i])(ctx, cs)
		})
		checkFresh(t, overHTTP, live, got, []string{recorded}, ids)
	}
}

// checkFresh checks that each client saw what the live client saw, and
// was handed elicitationIds of its own: none recorded, none another's.
func checkFresh(t *testing.T, overHTTP bool, live string, got, recorded, ids []string) {
	t.Helper()
	for i := range got {
		if d := cmp.Diff(live, got[i]); d != "" {
			t.Errorf("HTTP %v, client %d (-live +replay):\n%s", overHTTP, i, d)
		}
	}
	seen := map[string]bool{}
	for _, id := range recorded {
		seen[id] = true
	}
	for i, id := range ids {
		if seen[id] {
			t.Errorf("HTTP %v, client %d: handed elicitationId %s, recorded or another client's (recorded %q, handed %q)", overHTTP, i, id, recorded, ids)
		}
		seen[id] = true
	}
}

// replayConcurrently replays c to n clients at once, over stdio (a stream
// each, one Engine) or Streamable HTTP (one handler): run connects client
// i with tr. It fails t if a run fails.
func replayConcurrently(t *testing.T, c *cassettes.Cassette, overHTTP bool, n int, run func(ctx context.Context, i int, tr mcp.Transport) error) {
	t.Helper()
	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var stop []func()
	transport := func() mcp.Transport {
		clientR, clientW, serverR, serverW := pipePair()
		done := make(chan struct{})
		go func() {
			e.Serve(ctx, serverR, serverW)
			serverW.Close()
			close(done)
		}()
		mu.Lock()
		stop = append(stop, func() { clientW.Close(); <-done })
		mu.Unlock()
		return &mcp.IOTransport{Reader: clientR, Writer: clientW}
	}
	if overHTTP {
		h := e.Handler(nil)
		srv := httptest.NewServer(h)
		stop = append(stop, srv.Close, func() { h.Close() })
		transport = func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"} }
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = run(ctx, i, transport()) })
	}
	wg.Wait()
	for _, f := range stop {
		f()
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("HTTP %v, client %d: %v", overHTTP, i, err)
		}
	}
}
