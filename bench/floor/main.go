// Command floor is the least that any stdio replay can do, for the bench
// harness to measure mcpmock replay against: it answers each request with
// the next recorded answer to the same method, in the cassette's order,
// the id replaced, and does nothing else (no matching, no protocol, no
// log). It is a program of its own, not mcpmock's code. Like mcpmock's
// stdio reader it lets the scheduler run every 5 ms (runtime.Gosched): a
// goroutine that never leaves its processor makes Go's monitor thread wake
// thousands of times a second (internal/jsonrpc/lines.go, yielder), and the floor
// is the least a Go program can do.
//
//	floor CASSETTE
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"
)

func main() {
	answers, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	next := map[string]int{}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	var out []byte
	yielded := time.Now()
	for {
		line, err := in.ReadSlice('\n')
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if len(bytes.TrimSpace(line)) > 0 && json.Unmarshal(line, &msg) == nil && msg.ID != nil && msg.Method != "" {
			if list := answers[msg.Method]; len(list) > 0 {
				k := next[msg.Method] % len(list)
				next[msg.Method]++
				out = append(append(append(append(out[:0], `{"id":`...), msg.ID...), ','), list[k]...)
				os.Stdout.Write(append(out, '\n'))
			}
		}
		if now := time.Now(); now.Sub(yielded) >= 5*time.Millisecond {
			yielded = now
			runtime.Gosched()
		}
		if err != nil {
			return
		}
	}
}

// load returns the recorded answers of a cassette by the method they
// answer, each without its id and its opening brace.
func load(path string) (map[string][][]byte, error) {
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
		} `json:"interactions"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	answers := map[string][][]byte{}
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
		answers[req.Method] = append(answers[req.Method], rest[1:])
	}
	return answers, nil
}
