// Command httpfloor is the least that any Streamable HTTP replay of a
// stateful session can do, for the bench harness to measure mcpmock replay
// --listen against: each POSTed request gets the next recorded answer to
// the same method, the id replaced, in the form the server recorded
// (application/json or one event of a text/event-stream); a notification
// gets 202; a GET stream is held open with nothing on it. Nothing else: no
// matching, no sessions, no protocol, no log. It is a program of its own,
// not mcpmock's code. It prints "listening on URL" on stderr.
//
//	httpfloor CASSETTE
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
)

// answer is a recorded answer: the message without its id and opening
// brace, and whether it came as an event stream.
type answer struct {
	rest []byte
	sse  bool
}

func main() {
	answers, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpfloor:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	next := map[string]int{}
	http.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		case http.MethodDelete:
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &msg)
		w.Header().Set("Mcp-Session-Id", "floor")
		list := answers[msg.Method]
		if msg.ID == nil || len(list) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		mu.Lock()
		a := list[next[msg.Method]%len(list)]
		next[msg.Method]++
		mu.Unlock()
		var out bytes.Buffer
		if a.sse {
			w.Header().Set("Content-Type", "text/event-stream")
			out.WriteString("event: message\ndata: ")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		out.WriteString(`{"id":`)
		out.Write(msg.ID)
		out.WriteByte(',')
		out.Write(a.rest)
		if a.sse {
			out.WriteString("\n\n")
		}
		w.Write(out.Bytes())
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpfloor:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", l.Addr())
	http.Serve(l, nil)
}

// load returns the recorded answers of a cassette by the method they answer.
func load(path string) (map[string][]answer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c struct {
		Interactions []struct {
			Request  json.RawMessage `json:"request"`
			Response *struct {
				Message json.RawMessage `json:"message"`
			} `json:"response"`
			HTTP *struct {
				Form string `json:"form"`
			} `json:"http"`
		} `json:"interactions"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	answers := map[string][]answer{}
	for _, in := range c.Interactions {
		var req struct {
			Method string `json:"method"`
		}
		if in.Response == nil || json.Unmarshal(in.Request, &req) != nil {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in.Response.Message, &m); err != nil {
			return nil, err
		}
		delete(m, "id")
		rest, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		answers[req.Method] = append(answers[req.Method], answer{rest: rest[1:], sse: in.HTTP != nil && in.HTTP.Form == "sse"})
	}
	return answers, nil
}
