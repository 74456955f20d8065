package replayer

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestInflightWithoutCancel: a request whose plan cannot wait is in the
// table without a cancel (HTTP answers it under the request's context); a
// notifications/cancelled naming it, or the end of the session, passes it
// by and cancels the others.
func TestInflightWithoutCancel(t *testing.T) {
	var table inflight
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if !table.add("1", cancel) {
		t.Fatal("add to an open table refused")
	}
	if !table.add("2", nil) {
		t.Fatal("add without a cancel refused")
	}
	for _, id := range []string{"2", "3"} {
		msg, err := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		table.cancelled(msg)
	}
	if ctx.Err() != nil {
		t.Fatalf("cancelling requests 2 and 3 cancelled request 1: %v", context.Cause(ctx))
	}
	end := errors.New("the session ended")
	table.end(end)
	if context.Cause(ctx) != end {
		t.Errorf("the end of the session: request 1's cause %v, want %v", context.Cause(ctx), end)
	}
	table.forget("1", cancel)
	table.forget("2", nil)
	table.wait()
	if table.add("4", nil) {
		t.Error("add after the end accepted")
	}
}
