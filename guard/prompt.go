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
	var args bytes.Buffer
	if json.Indent(&args, c.Arguments, "    ", "  ") != nil {
		args.Reset()
		args.Write(c.Arguments)
	}
	q := fmt.Sprintf("\nmcpmock guard: the client wants to call tool %q\n  hints: %s\n  arguments: %s\nAllow this call? [y/N] ",
		c.Tool, c.Hints, args.String())
	return t.question(ctx, q, "allowed", "denied", "the call was withdrawn before an answer")
}

// ConfirmChange asks whether a changed tool definition replaces its pin.
func (t *Terminal) ConfirmChange(ctx context.Context, c Change) (bool, error) {
	fps := "now " + c.Current
	if c.Pinned != "" {
		fps = "pinned " + c.Pinned + ", " + fps
	}
	q := fmt.Sprintf("\nmcpmock guard: tool %q: %s\n  %s\n  (%s)\nShow it to the client and pin it in %s? [y/N] ",
		c.Tool, c.What, strings.ReplaceAll(c.Diff, "\n", "\n  "), fps, c.PinFile)
	return t.question(ctx, q, "pinned", "kept hidden", "the question was withdrawn before an answer: kept hidden")
}

// question shows q (lines end in "\n", written as "\r\n" for a terminal
// in raw mode) and waits for y or yes; yes and no say what the answer did.
func (t *Terminal) question(ctx context.Context, q, yes, no, withdrawn string) (bool, error) {
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
	if t.Pause != nil {
		t.Pause.Hold()
		defer t.Pause.Release()
	}
	fmt.Fprint(t.rw, strings.ReplaceAll(q, "\n", "\r\n"))
	select {
	case l, ok := <-t.lines:
		if !ok {
			return false, ErrNoAnswer
		}
		ok = strings.EqualFold(l, "y") || strings.EqualFold(l, "yes")
		if ok {
			fmt.Fprintf(t.rw, "mcpmock guard: %s\r\n", yes)
		} else {
			fmt.Fprintf(t.rw, "mcpmock guard: %s\r\n", no)
		}
		return ok, nil
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), ErrConfirmTimeout) {
			fmt.Fprintf(t.rw, "\r\nmcpmock guard: no answer in time (--confirm-timeout): %s\r\n", no)
		} else {
			fmt.Fprintf(t.rw, "\r\nmcpmock guard: %s\r\n", withdrawn)
		}
		return false, ctx.Err()
	}
}
