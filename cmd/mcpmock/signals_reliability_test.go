package main

import (
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// postJSON posts one JSON-RPC message to an MCP endpoint.
func postJSON(t *testing.T, url, sid, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestRecordHTTPSignals: the HTTP tap stopped by SIGINT or SIGTERM leaves
// every completed interaction; by SIGKILL, every one completed more than a
// second before.
func TestRecordHTTPSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			path := tempCassette(t)
			up := httpUpstream(t, testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true})
			p, u := startListening(t, "record", "-c", path, "--upstream", up+"/mcp", "--listen", ":0")
			resp, body := postJSON(t, u, "", initReq)
			sid := resp.Header.Get("Mcp-Session-Id")
			if sid == "" {
				t.Fatalf("initialize through the tap: %d %q", resp.StatusCode, body)
			}
			postJSON(t, u, sid, initialized)
			for i := range 3 {
				if resp, body := postJSON(t, u, sid, `{"jsonrpc":"2.0","id":`+itoa(5+i)+`,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`); resp.StatusCode != 200 {
					t.Fatalf("call: %d %q", resp.StatusCode, body)
				}
			}
			if sig == syscall.SIGKILL {
				// The guarantee is about time: what completed more than a
				// second ago is on disk.
				time.Sleep(1100 * time.Millisecond)
			}
			p.cmd.Process.Signal(sig)
			status := p.wait(t)
			if sig != syscall.SIGKILL && status != 0 {
				t.Errorf("exit status %d after %v, want 0", status, sig)
			}
			c, err := cassettes.Load(path)
			if err != nil {
				t.Fatalf("cassette after %v: %v", sig, err)
			}
			calls := 0
			for _, in := range c.Interactions {
				if strings.Contains(string(in.Request), `"tools/call"`) {
					calls++
					if in.Response == nil {
						t.Errorf("after %v a completed call lacks its response", sig)
					}
				}
			}
			if calls != 3 {
				t.Errorf("after %v the cassette holds %d calls, want 3", sig, calls)
			}
		})
	}
}

// TestRecordKilledAtRandom kills a stdio tap with SIGKILL at random moments
// of a busy session (a client calling as fast as it can): each time, the
// cassette on disk, if one was written yet, loads, and its calls that have
// responses are whole.
func TestRecordKilledAtRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9)) // fixed: the same moments each run
	rounds := 8
	loaded := 0
	for round := range rounds {
		path := tempCassette(t)
		p := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDK)...)...)
		p.send(t, initReq)
		p.recv(t)
		p.send(t, initialized)
		// A busy client: writes calls and drains answers until the tap dies.
		stop := make(chan struct{})
		go func() {
			go io.Copy(io.Discard, p.stdout)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":`+itoa(100+i)+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x`+itoa(i)+`"}}}`+"\n"); err != nil {
					return
				}
			}
		}()
		<-time.After(time.Duration(rng.IntN(1500)) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.wait(t)
		close(stop)
		if _, err := os.Stat(path); os.IsNotExist(err) {
			t.Logf("round %d: killed before the first save", round)
			continue
		}
		c, err := cassettes.Load(path)
		if err != nil {
			t.Fatalf("round %d: the cassette left by SIGKILL does not load: %v", round, err)
		}
		loaded++
		calls := 0
		for _, in := range c.Interactions {
			if strings.Contains(string(in.Request), `"echo"`) && in.Response != nil {
				calls++
				if !strings.Contains(string(in.Response.Message), `"result"`) {
					t.Errorf("round %d: a recorded call with a broken answer: %s", round, in.Response.Message)
				}
			}
		}
		t.Logf("round %d: the cassette holds %d answered calls", round, calls)
	}
	if loaded == 0 {
		t.Error("no round left a cassette to check")
	}
}
