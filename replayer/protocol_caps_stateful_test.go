package replayer_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// askAndElicit calls the protocol server's ask (sampling) and elicit tools
// and says how each ended.
func askAndElicit(out *[]string) func(context.Context, *mcp.ClientSession) error {
	return func(ctx context.Context, cs *mcp.ClientSession) error {
		*out = nil
		for _, tool := range []string{"ask", "elicit"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
			switch {
			case err != nil:
				*out = append(*out, tool+" error "+err.Error())
			case res.IsError:
				*out = append(*out, tool+" tool error "+res.Content[0].(*mcp.TextContent).Text)
			default:
				*out = append(*out, tool+" "+res.Content[0].(*mcp.TextContent).Text)
			}
		}
		return nil
	}
}

// bareClient declares neither sampling nor elicitation (no handlers).
func bareClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "bare-client", Version: "1"}, nil)
}

// Stateful era: the replay checks the capabilities the client declared in
// initialize. A go-sdk client that declares sampling and elicitation gets
// the recorded requests and answers; one that declares neither is sent
// neither: from a recording made with a declaring client its calls get
// -32021 (the recording holds no answer for such a client); from a
// cassette that also holds a session of a non-declaring client, they get
// what the server answered that client (the sampling request that client
// refused is not sent again; the elicitation the server never sent). Over
// stdio and Streamable HTTP.
func TestStatefulClientCapabilities(t *testing.T) {
	const version = "2025-11-25"
	var liveFull, liveBare []string
	full := recordGoSDK(t, protocolServer(0), newProtocolClient("octocat").client(), version, askAndElicit(&liveFull))
	bare := recordGoSDK(t, protocolServer(0), bareClient(), version, askAndElicit(&liveBare))
	if liveFull[0] != "ask sampled Paris" || liveFull[1] != "elicit elicited accept octocat" {
		t.Fatalf("live, declaring client: %q", liveFull)
	}
	if !strings.Contains(liveBare[1], "client does not support elicitation") {
		t.Fatalf("live, bare client: %q", liveBare)
	}
	both := &cassettes.Cassette{Version: 1, Interactions: append(append([]cassettes.Interaction{}, full.Interactions...), bare.Interactions...)}

	for _, overHTTP := range []bool{false, true} {
		var mu sync.Mutex
		mismatches := 0
		opts := &replayer.Options{OnReplyMismatch: func(replayer.ReplyMismatch) { mu.Lock(); mismatches++; mu.Unlock() }}
		var got []string
		// The declaring client, from either cassette: as recorded.
		for name, c := range map[string]*cassettes.Cassette{"full": full, "both": both} {
			if err := replayGoSDK(t, c, opts, overHTTP, newProtocolClient("octocat").client(), version, askAndElicit(&got)); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(liveFull, got); d != "" {
				t.Errorf("HTTP %v, %s cassette, declaring client (-live +replay):\n%s", overHTTP, name, d)
			}
		}
		// The bare client, from the declaring client's recording: -32021.
		if err := replayGoSDK(t, full, opts, overHTTP, bareClient(), version, askAndElicit(&got)); err != nil {
			t.Fatal(err)
		}
		for i, cap := range []string{"sampling", "elicitation"} {
			if !strings.Contains(got[i], "requires the "+cap+" capability") {
				t.Errorf("HTTP %v, full cassette, bare client: %q, want -32021 for %s", overHTTP, got[i], cap)
			}
		}
		// The bare client, from a cassette that has its kind: as that
		// session was recorded.
		if err := replayGoSDK(t, both, opts, overHTTP, bareClient(), version, askAndElicit(&got)); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(liveBare, got); d != "" {
			t.Errorf("HTTP %v, both cassette, bare client (-live +replay):\n%s", overHTTP, d)
		}
		// No request reached the bare client: it would have answered
		// an error, unlike the recorded declaring client.
		mu.Lock()
		if mismatches != 0 {
			t.Errorf("HTTP %v: %d replies differed: a request reached a client that could not take it", overHTTP, mismatches)
		}
		mu.Unlock()
	}
}

// A URL-mode elicitation (elicitation/create, or the -32042 error) goes
// only to a client that declared elicitation with url: a client that
// declares form mode only gets -32021.
func TestStatefulURLElicitationNeedsURLMode(t *testing.T) {
	c, _, _ := recordURLElicitation(t)
	for _, overHTTP := range []bool{false, true} {
		formOnly := mcp.NewClient(&mcp.Implementation{Name: "form-only", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				t.Errorf("HTTP %v: a URL elicitation reached a form-only client", overHTTP)
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		})
		err := replayGoSDK(t, c, nil, overHTTP, formOnly, "2025-11-25", func(ctx context.Context, cs *mcp.ClientSession) error {
			for _, tool := range []string{"connect", "fetch"} {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
				if err == nil || !strings.Contains(err.Error(), "requires the elicitation capability") {
					t.Errorf("HTTP %v: %s: %v, want -32021", overHTTP, tool, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
