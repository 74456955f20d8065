package stdio

import (
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/rusage"
)

// BenchmarkForwardSplice answers the idea of forwarding a tap's bytes with
// tee(2) and splice(2), so that they are not copied through user space
// twice, with a measurement: a message of 200 bytes goes from a client
// through a relay to an echoing server and back, over pipes, one at a
// time, as a client's sequential calls do. "read-write" is a relay that
// reads each message and writes it on, keeping a copy for its recording
// (what the stdio tap does); "tee-splice" tees each message into a pipe of
// the recording's, which a goroutine drains every millisecond, and
// splices it on. cpu-µs/op is the CPU time of the whole process (client,
// relay and server) a round trip, from getrusage.
//
// On the 2-core VM of December 2026 (go test -run '^$' -bench
// ForwardSplice -count 3 ./internal/stdio) tee and splice cost more:
// 63–66 µs of CPU and 74 µs a round trip against 44–49 µs and 44–49 µs.
// The bytes of a call are few, and what a message costs is its system
// calls and wake-ups, of which splicing adds one (tee, then splice) and
// saves none.
func BenchmarkForwardSplice(b *testing.B) {
	for _, mode := range []string{"read-write", "tee-splice"} {
		b.Run(mode, func(b *testing.B) {
			pipe := func() [2]int {
				var p [2]int
				if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
					b.Fatal(err)
				}
				return p
			}
			// Each forwarder, and the server, closes what it writes to
			// when what it reads from ends; the read ends are closed
			// here, once the client's has ended.
			toRelay, toServer, fromServer, toClient := pipe(), pipe(), pipe(), pipe()
			defer func() {
				for _, p := range [][2]int{toRelay, toServer, fromServer, toClient} {
					syscall.Close(p[0])
				}
			}()
			forward := forwardReadWrite
			if mode == "tee-splice" {
				forward = forwardTeeSplice
			}
			go echo(toServer[0], fromServer[1])
			go forward(toRelay[0], toServer[1])
			go forward(fromServer[0], toClient[1])
			msg := make([]byte, 200)
			for i := range msg {
				msg[i] = 'x'
			}
			buf := make([]byte, 4096)
			call := func() {
				if _, err := syscall.Write(toRelay[1], msg); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < len(msg); {
					n, err := syscall.Read(toClient[0], buf)
					if n <= 0 || err != nil {
						b.Fatal("read:", err)
					}
					got += n
				}
			}
			for range 100 {
				call()
			}
			before, ok := rusage.Self()
			for b.Loop() {
				call()
			}
			after, _ := rusage.Self()
			if ok {
				b.ReportMetric(float64(after.CPU()-before.CPU())/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
			}
			syscall.Close(toRelay[1])
			for {
				if n, _ := syscall.Read(toClient[0], buf); n <= 0 {
					break
				}
			}
		})
	}
}

// echo writes back what it reads, until its input ends.
func echo(in, out int) {
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Read(in, buf)
		if n <= 0 || err != nil {
			syscall.Close(out)
			return
		}
		syscall.Write(out, buf[:n])
	}
}

// forwardReadWrite reads and writes on, copying each read for a recording.
func forwardReadWrite(in, out int) {
	buf := make([]byte, 64<<10)
	var rec []byte
	for {
		n, err := syscall.Read(in, buf)
		if n <= 0 || err != nil {
			syscall.Close(out)
			return
		}
		rec = append(rec[:0], buf[:n]...)
		syscall.Write(out, buf[:n])
	}
}

// forwardTeeSplice tees what comes into a pipe that a recording drains,
// and splices it on.
func forwardTeeSplice(in, out int) {
	var rec [2]int
	if err := syscall.Pipe2(rec[:], syscall.O_CLOEXEC); err != nil {
		panic(err)
	}
	go func() {
		buf := make([]byte, 1<<20)
		for {
			time.Sleep(time.Millisecond)
			if n, _ := syscall.Read(rec[0], buf); n <= 0 {
				syscall.Close(rec[0])
				return
			}
		}
	}()
	defer syscall.Close(rec[1])
	defer syscall.Close(out)
	for {
		n, err := syscall.Tee(in, rec[1], 64<<10, 0)
		if n <= 0 || err != nil {
			return
		}
		for left := int(n); left > 0; {
			m, err := syscall.Splice(in, nil, out, nil, left, 0)
			if m <= 0 || err != nil {
				return
			}
			left -= int(m)
		}
	}
}
