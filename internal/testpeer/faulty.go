package testpeer

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Faulty server kinds, for the tests of what a tap does when its server
// misbehaves. They run as processes only ([Main] and [Command]), not with
// [Serve].
const (
	// ExitAtStart exits with status [ExitAtStartStatus] before reading
	// anything, after a line on stderr.
	ExitAtStart = "exit-at-start"
	// Garbage writes [GarbageLines] on stdout before it serves as [MCPGo],
	// and [GarbageTail] (no newline) when its stdin ends.
	Garbage = "garbage"
	// Hang writes [HangingLine] when it is ready, then reads its stdin and
	// never answers; it exits on SIGTERM (status 143), not when its stdin
	// ends.
	Hang = "hang"
	// HangHard is Hang that also ignores SIGTERM: only SIGKILL ends it.
	HangHard = "hang-hard"
	// TeeMCPGo serves as [MCPGo] and copies every byte it reads to the file
	// $MCPMOCK_TESTPEER_TEE.in and every byte it writes to
	// $MCPMOCK_TESTPEER_TEE.out, so that a test sees exactly what reached
	// the server and what it sent.
	TeeMCPGo = "tee-mcpgo"
)

// TeeEnvVar names the path prefix of the files of [TeeMCPGo].
const TeeEnvVar = "MCPMOCK_TESTPEER_TEE"

// ExitAtStartStatus is the exit status of [ExitAtStart].
const ExitAtStartStatus = 7

// GarbageLines are the lines [Garbage] writes before serving: none is a
// JSON-RPC message.
var GarbageLines = []string{
	"this is not JSON",
	"\x00\x01\x02\xfe\xff binary \x1b[31m",
	`{"jsonrpc":"2.0","id":"nobody","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":`,
}

// GarbageTail is what [Garbage] writes, without a newline, as its stdin
// ends.
const GarbageTail = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`

// HangingLine is the one line [Hang] and [HangHard] write, once their
// signals are set up.
const HangingLine = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hanging"}}`

// faultyKinds run the faulty kinds; each returns the exit status.
var faultyKinds = map[string]func() int{
	ExitAtStart: func() int {
		fmt.Fprintln(os.Stderr, "testpeer: exiting at start")
		return ExitAtStartStatus
	},
	Garbage: func() int {
		for _, l := range GarbageLines {
			os.Stdout.WriteString(l + "\n")
		}
		err := serve(context.Background(), MCPGo, os.Stdin, nopWriteCloser{os.Stdout}, func() { os.Exit(crashExitStatus) })
		os.Stdout.WriteString(GarbageTail)
		return exitStatusOf(err)
	},
	Hang: func() int {
		os.Stdout.WriteString(HangingLine + "\n")
		io.Copy(io.Discard, os.Stdin)
		for {
			time.Sleep(time.Hour)
		}
	},
	HangHard: func() int {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
		os.Stdout.WriteString(HangingLine + "\n")
		io.Copy(io.Discard, os.Stdin)
		for {
			time.Sleep(time.Hour)
		}
	},
	TeeMCPGo: func() int {
		prefix := os.Getenv(TeeEnvVar)
		in, err := os.Create(prefix + ".in")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		out, err := os.Create(prefix + ".out")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		r := struct {
			io.Reader
			io.Closer
		}{io.TeeReader(os.Stdin, in), os.Stdin}
		w := struct {
			io.Writer
			io.Closer
		}{io.MultiWriter(out, os.Stdout), os.Stdout}
		err = serve(context.Background(), MCPGo, r, w, func() { os.Exit(crashExitStatus) })
		in.Close()
		out.Close()
		return exitStatusOf(err)
	},
}

func exitStatusOf(err error) int {
	if err != nil && err != io.EOF && err != context.Canceled {
		fmt.Fprintln(os.Stderr, "testpeer:", err)
		return 1
	}
	return 0
}

// nopWriteCloser keeps stdout open after serve returns.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
