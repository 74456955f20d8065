package replayer_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// chosenServer is a real go-sdk server whose sign_in tool asks for a
// URL-mode elicitation under the id the client chose (the elicitationId
// argument), or one of its own when the client chose none; once the client
// accepts, it says the elicitation completed and answers with the id in
// its text and its structured content; last names the id of the last
// sign-in in a later call.
func chosenServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "chosen-id-server", Version: "1"}, nil)
	type in struct {
		ElicitationID string `json:"elicitationId,omitempty"`
	}
	type out struct {
		ElicitationID string `json:"elicitationId"`
		URL           string `json:"url"`
	}
	var mu sync.Mutex
	last := ""
	mcp.AddTool(s, &mcp.Tool{Name: "last"}, func(ctx context.Context, req *mcp.CallToolRequest, args struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "last elicitation " + last}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sign_in"}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, out, error) {
		id := args.ElicitationID
		if id == "" {
			id = "server-" + rand.Text()
		}
		mu.Lock()
		last = id
		mu.Unlock()
		url := "https://auth.example/connect?elicitation=" + id
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", ElicitationID: id, URL: url, Message: "sign in"})
		if err != nil {
			return nil, out{}, err
		}
		if res.Action == "accept" {
			req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in with elicitation " + id}}}, out{id, url}, nil
	})
	return s
}

// signIn calls sign_in with the client's id (none when "") and returns
// the ids the client saw in elicitation/create, in its url, in the
// completion, in the result's text and in its structured content, and in
// the answer of a later call of last.
func signIn(uc *urlClient, chosen string, saw *[]string) func(context.Context, *mcp.ClientSession) error {
	return func(ctx context.Context, cs *mcp.ClientSession) error {
		args := map[string]any{}
		if chosen != "" {
			args["elicitationId"] = chosen
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sign_in", Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) != 1 {
			return fmt.Errorf("sign_in: %+v", res)
		}
		asked := <-uc.asked
		var done string
		select {
		case done = <-uc.complete:
		case <-ctx.Done():
			return errors.New("no notifications/elicitation/complete")
		}
		var text string
		fmt.Sscanf(res.Content[0].(*mcp.TextContent).Text, "signed in with elicitation %s", &text)
		sc, _ := res.StructuredContent.(map[string]any)
		url, _ := sc["url"].(string)
		var inURL string
		fmt.Sscanf(asked.URL, "https://auth.example/connect?elicitation=%s", &inURL)
		var structured string
		fmt.Sscanf(url, "https://auth.example/connect?elicitation=%s", &structured)
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "last"})
		if err != nil {
			return err
		}
		var later string
		fmt.Sscanf(res.Content[0].(*mcp.TextContent).Text, "last elicitation %s", &later)
		*saw = []string{asked.ElicitationID, inURL, done, text, fmt.Sprint(sc["elicitationId"]), structured, later}
		return nil
	}
}

// A URL-mode elicitation whose id the client chose (an elicitationId in
// the tool's arguments) replays under the id the live client chose: in
// elicitation/create (and its url), in notifications/elicitation/complete
// and in the tool's result, text and structured content alike, and in the
// answer of a later call. One the server made up is replaced by a fresh
// id, the same in all of them. Over
// stdio and Streamable HTTP, with a real go-sdk client.
func TestElicitationIDs(t *testing.T) {
	for _, c := range []struct {
		name             string
		recorded, chosen string // the client's id when recorded and replayed; "" for none
	}{
		{"client-chosen", "my-own-id-42", "live-id-7"},
		{"client-chosen, the same again", "my-own-id-42", "my-own-id-42"},
		{"server-made", "", ""},
	} {
		var live []string
		uc := newURLClient()
		cas := recordGoSDK(t, chosenServer(), uc.client(), "2025-11-25", signIn(uc, c.recorded, &live))
		if c.recorded != "" && live[0] != c.recorded {
			t.Fatalf("%s: live, the server asked %q", c.name, live[0])
		}
		// The user matches calls whatever id the client chooses.
		cas.Match = json.RawMessage(`{"ignore":["arguments.elicitationId"]}`)
		for _, overHTTP := range []bool{false, true} {
			var got []string
			uc := newURLClient()
			if err := replayGoSDK(t, cas, nil, overHTTP, uc.client(), "2025-11-25", signIn(uc, c.chosen, &got)); err != nil {
				t.Fatalf("%s, HTTP %v: %v", c.name, overHTTP, err)
			}
			want := c.chosen
			if want == "" {
				want = got[0]
				if want == live[0] || want == "" {
					t.Errorf("%s, HTTP %v: the server-made id %q is not fresh (recorded %q)", c.name, overHTTP, want, live[0])
				}
			}
			if d := cmp.Diff([]string{want, want, want, want, want, want, want}, got); d != "" {
				t.Errorf("%s, HTTP %v: create, its url, completion, text, structured id, structured url, later call (-want +got):\n%s", c.name, overHTTP, d)
			}
		}
	}
}
