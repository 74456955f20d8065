package replayer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/replayer"
)

// clientAnswering is uc's client answering every elicitation with action.
func (uc *urlClient) clientAnswering(action string) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "url-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			uc.asked <- req.Params
			return &mcp.ElicitResult{Action: action}, nil
		},
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			uc.complete <- req.Params.ElicitationID
		},
	})
}

// A recording in which the client accepted a URL-mode elicitation (and the
// server then said it completed) replays to a go-sdk client that declines
// or cancels it without the completion, over stdio and Streamable HTTP:
// the next completion the client gets is the one of the elicitation it
// went on to finish (fetch's -32042, then visit), and the reply that
// differs from the recording is reported. A client that accepts still gets
// both completions.
func TestURLElicitationDeclinedNotCompleted(t *testing.T) {
	c, _, _ := recordURLElicitation(t)
	for _, overHTTP := range []bool{false, true} {
		for _, action := range []string{"decline", "cancel", "accept"} {
			uc := newURLClient()
			var mu sync.Mutex
			var mismatches []string
			opts := &replayer.Options{OnReplyMismatch: func(m replayer.ReplyMismatch) {
				mu.Lock()
				mismatches = append(mismatches, m.Method)
				mu.Unlock()
			}}
			err := replayGoSDK(t, c, opts, overHTTP, uc.clientAnswering(action), "2025-11-25", func(ctx context.Context, cs *mcp.ClientSession) error {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "connect"}); err != nil {
					return err
				}
				asked := <-uc.asked
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch"})
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != replayer.CodeURLElicitationRequired {
					return fmt.Errorf("fetch: %v, want -32042", err)
				}
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit"}); err != nil {
					return err
				}
				// Completions come in the order sent: the connect
				// elicitation's, if sent, before fetch's.
				select {
				case id := <-uc.complete:
					if (id == asked.ElicitationID) != (action == "accept") {
						return fmt.Errorf("the first completion is of %s; connect's elicitation was %s", id, asked.ElicitationID)
					}
				case <-ctx.Done():
					return ctx.Err()
				}
				return nil
			})
			if err != nil {
				t.Errorf("HTTP %v, %s: %v", overHTTP, action, err)
			}
			mu.Lock()
			if want := action != "accept"; (len(mismatches) == 1) != want {
				t.Errorf("HTTP %v, %s: reply mismatches %q, want one: %v", overHTTP, action, mismatches, want)
			}
			mu.Unlock()
		}
	}
}
