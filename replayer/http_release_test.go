package replayer

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestResumableResponseOutlivesLaterCalls: a resumable POST stream keeps
// its events for a client that comes back, so the memory of its response
// must not be handed to the plans that answer later calls (Plan.Release
// rather than ReleaseAll). Resuming after the first event gives the
// response as it was first sent, after other calls in the session.
func TestResumableResponseOutlivesLaterCalls(t *testing.T) {
	streamed := `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}},` +
		`"exchange":[{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}}],` +
		`"http":{"status":200,"form":"sse","eventIds":["e1","e2"]},` +
		`"response":{"from":"server","atMs":2,"message":{"jsonrpc":"2.0","id":2,"result":` + text("done") + `}}}`
	srv, _ := serveHTTP(t, cassette(initialize, streamed, call(3, "other", `{}`, text(strings.Repeat("x", 40)))), nil)
	u := srv.URL + "/mcp"
	sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	hdr := map[string]string{"Mcp-Session-Id": sid}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	resp := openPOST(t, ctx, u, sid, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"t"}}}`)
	sc := bufio.NewScanner(resp.Body)
	progress, _ := readEvent(sc)
	response, ok := readEvent(sc)
	resp.Body.Close()
	if !ok || progress.id != "e1" || response.id != "e2" || !strings.Contains(response.data, `"done"`) {
		t.Fatalf("events %+v %+v, want progress (e1) and the response (e2)", progress, response)
	}
	for i := range 5 {
		if got := do(t, "POST", u, matchCall(10+i, "other", `{}`), hdr); got.status != http.StatusOK || !strings.Contains(got.body, "xxxx") {
			t.Fatalf("call %d: %d %s", i, got.status, got.body)
		}
	}
	_, next := getStream(t, ctx, u, sid, progress.id)
	if ev := next(); ev.id != "e2" || ev.data != response.data {
		t.Errorf("resumed after e1: %+v, want the response as first sent: %s", ev, response.data)
	}
}
