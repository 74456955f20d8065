package guard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// ErrNoAnswer is returned by Terminal.Confirm when the terminal closed
// before the person answered.
var ErrNoAnswer = errors.New("the terminal closed before an answer")

// Terminal is a Prompter on a terminal (mcpmock opens /dev/tty, since stdin
// and stdout carry the protocol). It shows the tool, its hints and its
// arguments, and allows the call only on "y" or "yes"; anything else, or an
// empty line, denies. Lines typed before a question do not answer it.
type Terminal struct {
	rw io.ReadWriter
	// Pause, when set, is held while a question is open, so that what else
	// writes to the terminal (the live log) waits until it is answered.
	Pause interface {
		Hold()
		Release()
	}

	once  sync.Once
	lines chan string // lines read from the terminal; closed at EOF
}

// NewTerminal returns a prompter on rw. Its reader goroutine ends when a
// read of rw fails (the terminal is closed).
func NewTerminal(rw io.ReadWriter) *Terminal {
	return &Terminal{rw: rw, lines: make(chan string, 16)}
}

func (t *Terminal) start() {
	go func() {
		defer close(t.lines)
		br := bufio.NewReader(t.rw)
		for {
			l, err := br.ReadString('\n')
			if l != "" || err == nil {
				t.lines <- strings.TrimSpace(l)
			}
			if err != nil {
				return
			}
		}
	}()
}

// Confirm asks whether the call may go on.
func (t *Terminal) Confirm(ctx context.Context, c Call) (bool, error) {
	t.once.Do(t.start)
	// Forget what was typed before the question.
	for drained := false; !drained; {
		select {
		case _, ok := <-t.lines:
			if !ok {
				return false, ErrNoAnswer
			}
		default:
			drained = true
		}
	}
	var args bytes.Buffer
	if json.Indent(&args, c.Arguments, "    ", "  ") != nil {
		args.Reset()
		args.Write(c.Arguments)
	}
	if t.Pause != nil {
		t.Pause.Hold()
		defer t.Pause.Release()
	}
	fmt.Fprintf(t.rw, "\r\nmcpmock guard: the client wants to call tool %q\r\n  hints: %s\r\n  arguments: %s\r\nAllow this call? [y/N] ",
		c.Tool, c.Hints, strings.ReplaceAll(args.String(), "\n", "\r\n"))
	select {
	case l, ok := <-t.lines:
		if !ok {
			return false, ErrNoAnswer
		}
		yes := strings.EqualFold(l, "y") || strings.EqualFold(l, "yes")
		if yes {
			fmt.Fprint(t.rw, "mcpmock guard: allowed\r\n")
		} else {
			fmt.Fprint(t.rw, "mcpmock guard: denied\r\n")
		}
		return yes, nil
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), ErrConfirmTimeout) {
			fmt.Fprint(t.rw, "\r\nmcpmock guard: no answer in time (--confirm-timeout): denied\r\n")
		} else {
			fmt.Fprint(t.rw, "\r\nmcpmock guard: the call was withdrawn before an answer\r\n")
		}
		return false, ctx.Err()
	}
}
