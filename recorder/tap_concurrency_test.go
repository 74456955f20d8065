package recorder

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

const tapInFlight = 1000

func echoCall(id string, i int) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t` + fmt.Sprint(i) + `"}}}`
}

// echoAnswer returns the id and the echoed text of an answer.
func echoAnswer(line string) (string, string, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || len(m.Result.Content) == 0 {
		return "", "", fmt.Errorf("not an echo result: %.300q", line)
	}
	return string(m.ID), m.Result.Content[0].Text, nil
}

// checkRecordedPairs checks that the cassette pairs each echo call with the
// answer to it.
func checkRecordedPairs(t *testing.T, c *cassettes.Cassette, want int) {
	t.Helper()
	n := 0
	for _, in := range c.Interactions {
		if in.Request == nil || !strings.Contains(string(in.Request), `"echo"`) {
			continue
		}
		n++
		if in.Response == nil {
			t.Fatalf("a call without its answer: %s", in.Request)
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Arguments struct{ Text string } `json:"arguments"`
			} `json:"params"`
		}
		json.Unmarshal(in.Request, &req)
		id, text, err := echoAnswer(string(in.Response.Message))
		if err != nil || id != string(req.ID) || text != req.Params.Arguments.Text {
			t.Fatalf("recorded call %s (%q) paired with answer %s (%q) %v", req.ID, req.Params.Arguments.Text, id, text, err)
		}
	}
	if n != want {
		t.Errorf("%d calls recorded, want %d", n, want)
	}
}

// TestStdioTapConcurrent writes 1,000 calls through the stdio tap to a real
// go-sdk server before reading any answer.
func TestStdioTapConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	argv, env := testpeer.Command(testpeer.GoSDK)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := Stdio(testCtx(t), argv, inR, outW, io.Discard, rec, &StdioOptions{Env: env})
		outW.Close()
		done <- err
	}()
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n")
	sb.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	want := map[string]string{}
	for i := range tapInFlight {
		id := fmt.Sprint(1000 + i)
		if i%2 == 0 {
			id = `"s` + fmt.Sprint(i) + `"`
		}
		want[id] = "t" + fmt.Sprint(i)
		sb.WriteString(echoCall(id, i) + "\n")
	}
	go io.WriteString(inW, sb.String())
	br := bufio.NewReader(outR)
	if _, err := br.ReadString('\n'); err != nil { // initialize
		t.Fatal(err)
	}
	for range tapInFlight {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", tapInFlight-len(want), err)
		}
		id, text, err := echoAnswer(line)
		if err != nil || want[id] != text {
			t.Fatalf("id %s got %q (%v), want %q", id, text, err, want[id])
		}
		delete(want, id)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	checkRecordedPairs(t, c, tapInFlight)
}

// TestHTTPTapConcurrent runs 20 sessions of 50 calls each through the HTTP
// tap to a real go-sdk server, all 1,000 at once.
func TestHTTPTapConcurrent(t *testing.T) {
	const sessions = 20
	up := upstreamServer(t, testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true})
	base, rec := startTap(t, up.URL+"/mcp")
	u := base + "/mcp"
	post := func(sid, body string) (string, string, error) {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), string(b), err
	}
	sids := make([]string, sessions)
	for s := range sessions {
		sid, body, err := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		if err != nil || sid == "" {
			t.Fatalf("initialize: %v %q", err, body)
		}
		sids[s] = sid
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, tapInFlight)
	for i := range tapInFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			id := fmt.Sprint(5000 + i)
			_, body, err := post(sids[i%sessions], echoCall(id, i))
			if err != nil {
				errs <- err
				return
			}
			gotID, text, err := echoAnswer(body)
			if err != nil || gotID != id || text != "t"+fmt.Sprint(i) {
				errs <- fmt.Errorf("request %s got id %s text %q (%v)", id, gotID, text, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rec.Sync()
	checkRecordedPairs(t, rec.Cassette(), tapInFlight)
}
