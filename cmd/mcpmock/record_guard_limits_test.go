package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/guard"
	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/recorder"
)

// strictMeta makes a go-sdk server refuse a tools/list without the
// per-request _meta of 2026-07-28, as the specification says a server
// must (-32602); the go-sdk refuses it on HTTP by itself, not on stdio.
func strictMeta(s *mcp.Server) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if lr, ok := req.(*mcp.ListToolsRequest); ok {
				var meta map[string]any
				if lr.Params != nil {
					meta = lr.Params.GetMeta()
				}
				if meta[mcp.MetaKeyProtocolVersion] == nil || meta[mcp.MetaKeyClientCapabilities] == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "strict test server: tools/list without the per-request _meta of 2026-07-28"}
				}
			}
			return next(ctx, method, req)
		}
	})
}

// connect2026 connects a go-sdk client that speaks 2026-07-28 and listens
// for tool changes (it opens a subscriptions/listen stream for them);
// changed receives each notifications/tools/list_changed it gets.
func connect2026(t *testing.T, tr mcp.Transport) (toolClient, <-chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 4)
	c := connectGoSDKWith(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, tr, nil)
	if v := c.(gosdkClient).cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client speaks %s, want 2026-07-28", v)
	}
	return c, changed
}

// TestGuardListChanged2026: with a go-sdk client and server of 2026-07-28
// (stateless), the list_changed comes on the client's subscriptions/listen
// stream, and the guard lists the tools itself at once (the stream stays
// open) with a valid request of that version: the per-request _meta and,
// on HTTP, the Mcp-Method and Mcp-Protocol-Version headers of its own.
func TestGuardListChanged2026(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		cassette := filepath.Join(t.TempDir(), "c.json")
		p := startGuard(t, nil, "record", "-c", cassette, "--confirm", "destructive", "--trust-server",
			"--", "env", "-u", beMain, changingServerEnv+"=strict", os.Args[0], "-test.run=^$")
		c, changed := connect2026(t, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin})
		listChangedCalls(t, c, p.stderr)
		<-changed
		// End the session from the client's side while mcpmock can still
		// write to it (the server answers the subscriptions/listen when its
		// stdin ends): closing mcpmock's stdout would kill it with SIGPIPE
		// before it saves.
		p.stdin.Close()
		p.wait(t)
		c.close()
		checkNoOwnTraffic(t, cassette)
		if strings.Contains(p.stderr.String(), "refused the guard's own tools/list") {
			t.Errorf("the server refused the guard's own tools/list:\n%s", p.stderr)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		s := changingServer()
		strictMeta(s)
		up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: true}))
		t.Cleanup(up.Close)
		cassette := filepath.Join(t.TempDir(), "c.json")
		p, url := startListening(t, "record", "-c", cassette, "--confirm", "destructive", "--trust-server",
			"--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0")
		c, changed := connect2026(t, &mcp.StreamableClientTransport{Endpoint: url})
		listChangedCalls(t, c, p.stderr)
		<-changed
		c.close()
		if status := stopAndWait(t, p); status != 0 {
			t.Errorf("record exited with %d", status)
		}
		checkNoOwnTraffic(t, cassette)
		if strings.Contains(p.stderr.String(), "guard's own") {
			t.Errorf("the guard's own tools/list failed:\n%s", p.stderr)
		}
	})
}

// batchTimeoutBody is a 2025-03-26 batch: a call that hangs, a quick one,
// and one to a denied tool.
const batchTimeoutBody = `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":30000}}},` +
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}},` +
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Paris"}}}]`

var batchTimeoutFlags = []string{"--call-timeout", "500ms", "--deny-tools", "get_weather"}

// answersByID returns each answer's summary by id: the first text of a
// result ("error: " first when isError), or "code N" for an error.
func answersByID(t *testing.T, msgs []map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range msgs {
		id := fmt.Sprint(m["id"])
		if _, dup := out[id]; dup {
			t.Errorf("two answers to id %s", id)
		}
		b, _ := json.Marshal(m)
		var r struct {
			Result *struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			} `json:"result"`
			Error *struct{ Code int } `json:"error"`
		}
		json.Unmarshal(b, &r)
		switch {
		case r.Error != nil:
			out[id] = fmt.Sprintf("code %d", r.Error.Code)
		case r.Result != nil && len(r.Result.Content) > 0:
			out[id] = r.Result.Content[0].Text
			if r.Result.IsError {
				out[id] = "error: " + out[id]
			}
		default:
			out[id] = string(b)
		}
	}
	return out
}

// checkBatchTimeout checks the answers to batchTimeoutBody: the hung call
// timed out, the denied one refused, and the quick one answered by the
// server or, when the server holds the batch's answers until its last call
// (the go-sdk on stdio and in JSON), timed out too.
func checkBatchTimeout(t *testing.T, got map[string]string, quick string) {
	t.Helper()
	timeout := `error: mcpmock guard: tool "slow" did not answer within 500ms; the call was cancelled`
	want := map[string]string{"1": timeout, "2": quick, "3": "code -32602"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("answer to %s = %q, want %q", id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("answers = %v, want one to each of 1, 2, 3", got)
	}
}

// TestGuardBatchTimeoutStdio sends the batch from a stdio client to a
// go-sdk server (which takes batches in 2025-03-26 and answers a batch as a
// whole, once its last call is done), on the stdio tap and through the
// bridge to the server over Streamable HTTP: at --call-timeout the calls
// that the server has not answered (on stdio both, as one batch) get the
// timeout error and are cancelled upstream; the server's late answer (or the bridge's
// error for a stream that ended without one) is dropped, and the client
// gets nothing more for them.
func TestGuardBatchTimeoutStdio(t *testing.T) {
	for _, pairing := range []string{"stdio", "stdio-to-http"} {
		t.Run(pairing, func(t *testing.T) {
			t.Parallel()
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			args := append([]string{"record", "-c", filepath.Join(t.TempDir(), "c.json"), "--audit-file", audit}, batchTimeoutFlags...)
			if pairing == "stdio" {
				args = append(append(args, "--"), peerCommand(testpeer.GoSDK)...)
			} else {
				args = append(args, "--upstream", httpUpstream(t, testpeer.GoSDK, testpeer.HTTPServerOptions{})+"/mcp")
			}
			p := startGuard(t, nil, args...)
			// A read that waits too long fails: the process is killed.
			context.AfterFunc(testContext(t), func() { p.cmd.Process.Kill() })
			out := bufio.NewReader(p.stdout)
			send := func(line string) {
				t.Helper()
				if _, err := p.stdin.Write([]byte(line + "\n")); err != nil {
					t.Fatal(err)
				}
			}
			// recv reads the answers until n have come (a line is a message
			// or a batch of them).
			recv := func(n int) []map[string]any {
				t.Helper()
				var msgs []map[string]any
				for len(msgs) < n {
					line, err := out.ReadBytes('\n')
					if err != nil {
						t.Fatalf("reading mcpmock's stdout: %v (so far %v)", err, msgs)
					}
					var many []map[string]any
					var one map[string]any
					if json.Unmarshal(line, &many) == nil {
						msgs = append(msgs, many...)
					} else if json.Unmarshal(line, &one) == nil {
						msgs = append(msgs, one)
					} else {
						t.Fatalf("not JSON-RPC: %q", line)
					}
				}
				return msgs
			}
			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			recv(1)
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(batchTimeoutBody)
			// Over HTTP the server answers the quick call on its event
			// stream as it is done.
			quick, decided := "5", []string{"get_weather deny", "slow timeout", "add allow"}
			if pairing == "stdio" {
				quick, decided = `error: mcpmock guard: tool "add" did not answer within 500ms; the call was cancelled`, []string{"get_weather deny", "slow timeout", "add timeout"}
			}
			got := answersByID(t, recv(3))
			checkBatchTimeout(t, got, quick)
			waitLog(t, p.stderr, "the late answer of tool slow (id 1) was dropped")
			// Nothing more came for the batch: the next line answers the ping.
			send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
			if next := recv(1)[0]; fmt.Sprint(next["id"]) != "9" {
				t.Errorf("after the batch's answers came %v, want the answer to the ping", next)
			}
			p.stdin.Close()
			p.wait(t)
			decisions, _ := readAudit(t, audit)
			for _, want := range decided {
				if !strings.Contains(strings.Join(decisions, ","), want) {
					t.Errorf("audit = %v, want %q", decisions, want)
				}
			}
		})
	}
}

// TestGuardBatchTimeoutHTTP sends the batch over Streamable HTTP to a
// go-sdk server: on an SSE answer the quick call's answer passes as it
// comes and the hung call is answered with the timeout error on the same
// stream; on a JSON answer (which the server gives only once every call is
// done) the guard answers at --call-timeout with every response: the
// timeouts and the refusal. The hung calls are cancelled upstream.
func TestGuardBatchTimeoutHTTP(t *testing.T) {
	for _, jsonResp := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResp), func(t *testing.T) {
			t.Parallel()
			up, cancelled := cancelWatch(t, testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: jsonResp})
			args := append([]string{"record", "-c", filepath.Join(t.TempDir(), "c.json"),
				"--upstream", up + "/mcp", "--listen", "127.0.0.1:0"}, batchTimeoutFlags...)
			p, url := startListening(t, args...)
			session := rawInit(t, url)
			status, _, msgs := rawPost(t, url, session, batchTimeoutBody)
			if status != http.StatusOK {
				t.Errorf("batch answer: %d, want 200", status)
			}
			quick := "5"
			if jsonResp {
				quick = `error: mcpmock guard: tool "add" did not answer within 500ms; the call was cancelled`
			}
			checkBatchTimeout(t, answersByID(t, msgs), quick)
			select {
			case body := <-cancelled:
				if !strings.Contains(body, `"requestId":1`) {
					t.Errorf("notifications/cancelled upstream = %s, want one for id 1", body)
				}
			case <-testContext(t).Done():
				t.Fatal("no notifications/cancelled reached the server")
			}
			if status := stopAndWait(t, p); status != 0 {
				t.Errorf("record exited with %d", status)
			}
		})
	}
}

// answeringPrompter is the person at the terminal: it hands each question
// to the test and answers what the test says.
type answeringPrompter struct {
	asked  chan guard.Call
	answer chan bool
}

func (p answeringPrompter) Confirm(ctx context.Context, c guard.Call) (bool, error) {
	p.asked <- c
	select {
	case ok := <-p.answer:
		return ok, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// ConfirmChange: this person is asked about calls only.
func (p answeringPrompter) ConfirmChange(ctx context.Context, c guard.Change) (bool, error) {
	return false, fmt.Errorf("answeringPrompter was asked about a changed tool %s", c.Tool)
}

// TestGuardConfirmHTTPSSE: over HTTP+SSE (2024-11-05), a call that a person
// allows gets the server's real answer on the client's event stream, and a
// declined one the guard's tool error there (the POSTs are answered 202).
// The tap runs in the test with the guard's prompt abstraction as the
// person; real clients and servers of both libraries.
func TestGuardConfirmHTTPSSE(t *testing.T) {
	for _, kind := range []string{testpeer.GoSDK, testpeer.MCPGo} {
		for _, lib := range []string{"gosdk-sse", "mcpgo-sse"} {
			t.Run(kind+"/"+lib, func(t *testing.T) {
				t.Parallel()
				up := httpUpstream(t, kind, testpeer.HTTPServerOptions{})
				rec, err := recorder.New(filepath.Join(t.TempDir(), "c.json"), nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { rec.Close() })
				person := answeringPrompter{asked: make(chan guard.Call), answer: make(chan bool)}
				g, err := guard.New(&guard.Options{Confirm: []string{"echo"}, Prompter: person})
				if err != nil {
					t.Fatal(err)
				}
				tap, err := recorder.NewHTTP(up+"/mcp", rec, &recorder.HTTPOptions{Guard: g})
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(tap)
				t.Cleanup(srv.Close)
				c := httpClient(t, lib, srv.URL+"/mcp")
				ctx := testContext(t)
				for _, allow := range []bool{true, false} {
					type answer struct {
						text  string
						isErr bool
						err   error
					}
					done := make(chan answer, 1)
					go func() {
						text, isErr, _, err := c.call(ctx, "echo", map[string]any{"text": "hello"})
						done <- answer{text, isErr, err}
					}()
					select {
					case call := <-person.asked:
						if call.Tool != "echo" || !strings.Contains(string(call.Arguments), "hello") {
							t.Errorf("the person was asked about %+v", call)
						}
					case <-ctx.Done():
						t.Fatal("the person was not asked")
					}
					person.answer <- allow
					a := <-done
					switch {
					case allow && (a.err != nil || a.isErr || a.text != "hello"):
						t.Errorf("allowed call = %+v, want the server's answer hello", a)
					case !allow && (a.err != nil || !a.isErr || !strings.Contains(a.text, "declined at the terminal")):
						t.Errorf("declined call = %+v, want the guard's tool error", a)
					}
				}
				c.close()
			})
		}
	}
}
