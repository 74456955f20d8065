package replayer_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
)

// urlServer is a real go-sdk server with URL-mode elicitation: connect
// asks for a URL-mode elicitation and, once the client accepts, says it
// completed; fetch answers -32042 (URL elicitation required) until visit
// (the user finishing out of band) completes that elicitation.
func urlServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "url-server", Version: "1"}, nil)
	type noIn struct{}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	newID := func() string { return rand.Text() }
	var mu sync.Mutex
	pending, authorized := "", false
	mcp.AddTool(s, &mcp.Tool{Name: "connect"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		id := newID()
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", ElicitationID: id, URL: "https://auth.example/connect?elicitation=" + id, Message: "sign in"})
		if err != nil {
			return nil, nil, err
		}
		if res.Action == "accept" {
			req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
		}
		return text("connected " + res.Action), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fetch"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		if authorized {
			return text("fetched"), nil, nil
		}
		pending = newID()
		return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", ElicitationID: pending,
			URL: "https://auth.example/grant?elicitation=" + pending, Message: "grant access"}})
	})
	mcp.AddTool(s, &mcp.Tool{Name: "visit"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		authorized = true
		id := pending
		mu.Unlock()
		req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
		return text("visited"), nil, nil
	})
	return s
}

// urlClient is a go-sdk client that declares URL-mode elicitation, accepts
// every elicitation and keeps the ids it was asked for and told complete.
type urlClient struct {
	asked    chan *mcp.ElicitParams
	complete chan string
}

func newURLClient() *urlClient {
	return &urlClient{asked: make(chan *mcp.ElicitParams, 10), complete: make(chan string, 10)}
}

func (uc *urlClient) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "url-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			uc.asked <- req.Params
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			uc.complete <- req.Params.ElicitationID
		},
	})
}

// script runs connect, fetch (-32042), visit, fetch. It returns what the
// client saw with the ids abstracted, and the ids themselves.
func (uc *urlClient) script(out *[]string, ids *[]string) func(context.Context, *mcp.ClientSession) error {
	return func(ctx context.Context, cs *mcp.ClientSession) error {
		*out, *ids = nil, nil
		add := func(format string, args ...any) { *out = append(*out, fmt.Sprintf(format, args...)) }
		waitComplete := func() (string, error) {
			select {
			case id := <-uc.complete:
				return id, nil
			case <-ctx.Done():
				return "", errors.New("no notifications/elicitation/complete")
			}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "connect"})
		if err != nil {
			return err
		}
		asked := <-uc.asked
		done, err := waitComplete()
		if err != nil {
			return err
		}
		*ids = append(*ids, asked.ElicitationID)
		add("connect %s: asked %s, url has its id %v, completed the same %v", res.Content[0].(*mcp.TextContent).Text, asked.Mode,
			strings.HasSuffix(asked.URL, "="+asked.ElicitationID), done == asked.ElicitationID)

		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch"})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			return fmt.Errorf("fetch: %v, want -32042", err)
		}
		var data struct {
			Elicitations []*mcp.ElicitParams `json:"elicitations"`
		}
		json.Unmarshal(rpcErr.Data, &data)
		if len(data.Elicitations) != 1 {
			return fmt.Errorf("fetch: %s", rpcErr.Data)
		}
		el := data.Elicitations[0]
		*ids = append(*ids, el.ElicitationID)
		add("fetch error %d: %s, url has its id %v", rpcErr.Code, el.Mode, strings.HasSuffix(el.URL, "="+el.ElicitationID))
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit"})
		if err != nil {
			return err
		}
		if done, err = waitComplete(); err != nil {
			return err
		}
		add("%s, completed the required one %v", res.Content[0].(*mcp.TextContent).Text, done == el.ElicitationID)
		if res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch"}); err != nil {
			return err
		}
		add("fetch again: %s", res.Content[0].(*mcp.TextContent).Text)
		select {
		case id := <-uc.complete:
			return fmt.Errorf("an extra completion of %s", id)
		case <-time.After(0):
		}
		return nil
	}
}

func recordURLElicitation(t *testing.T) (*cassettes.Cassette, []string, []string) {
	t.Helper()
	var live, ids []string
	uc := newURLClient()
	c := recordGoSDK(t, urlServer(), uc.client(), "2025-11-25", uc.script(&live, &ids))
	if len(live) != 4 || !strings.Contains(live[0], "completed the same true") || !strings.Contains(live[1], "-32042") {
		t.Fatalf("live: %q", live)
	}
	return c, live, ids
}

// URL-mode elicitation recorded from a real go-sdk server replays to a
// real go-sdk client over stdio and Streamable HTTP: each URL-mode
// elicitation/create and each elicitation of the -32042 error gets a fresh
// elicitationId (in its url too), and notifications/elicitation/complete
// names it, after the client's reply or the out-of-band step as recorded.
func TestURLElicitation(t *testing.T) {
	c, live, recorded := recordURLElicitation(t)
	seen := map[string]bool{}
	for _, id := range recorded {
		seen[id] = true
	}
	for _, overHTTP := range []bool{false, true} {
		for round := range 2 {
			var got, ids []string
			uc := newURLClient()
			if err := replayGoSDK(t, c, nil, overHTTP, uc.client(), "2025-11-25", uc.script(&got, &ids)); err != nil {
				t.Fatalf("HTTP %v, round %d: %v (so far %q)", overHTTP, round, err, got)
			}
			if d := cmp.Diff(live, got); d != "" {
				t.Errorf("HTTP %v, round %d (-live +replay):\n%s", overHTTP, round, d)
			}
			for _, id := range ids {
				if seen[id] {
					t.Errorf("HTTP %v, round %d: elicitation id %s was handed out before (recorded %q)", overHTTP, round, id, recorded)
				}
				seen[id] = true
			}
		}
	}
}

// A completion of an elicitation the session was never sent is not sent.
func TestElicitationCompleteWithoutElicitation(t *testing.T) {
	c, _, _ := recordURLElicitation(t)
	uc := newURLClient()
	err := replayGoSDK(t, c, nil, false, uc.client(), "2025-11-25", func(ctx context.Context, cs *mcp.ClientSession) error {
		// visit without the fetch that made the elicitation.
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-uc.complete:
		t.Errorf("a completion of %s, which this session was never asked", id)
	default:
	}
}
