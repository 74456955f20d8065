package jsonrpc

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func decodeAll(t testing.TB, stream string, max int, chunk int) []Event {
	t.Helper()
	d := NewSSEDecoder(max)
	var evs []Event
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		evs = d.Feed(evs, []byte(stream[:n]))
		stream = stream[n:]
	}
	if ev, ok := d.Flush(); ok {
		evs = append(evs, ev)
	}
	return evs
}

func TestSSEDecoder(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		max    int
		want   []Event
	}{
		{"one event", "event: message\ndata: {\"a\":1}\nid: 7\n\n",
			0, []Event{{Type: "message", Data: []byte(`{"a":1}`), ID: "7", HasID: true, Size: 7}}},
		{"multi-line data, CRLF", "data: a\r\ndata:b\r\ndata\r\n\r\n",
			0, []Event{{Data: []byte("a\nb\n"), Size: 4}}},
		{"CR line ends", "data: x\rid: 1\r\r", 0, []Event{{Data: []byte("x"), ID: "1", HasID: true, Size: 1}}},
		{"comment keep-alive and retry", ": ping\n\nretry: 3000\nid: p1\ndata:\n\n",
			0, []Event{{Comments: []string{"ping"}}, {Retry: 3000, HasRetry: true, ID: "p1", HasID: true, Data: []byte{}}}},
		{"priming event: id only", "id: 0\n\n", 0, []Event{{ID: "0", HasID: true}}},
		{"bad retry ignored, unknown field ignored", "retry: 1x\nfoo: bar\ndata: d\n\n",
			0, []Event{{Data: []byte("d"), Size: 1}}},
		{"byte order mark", "\xEF\xBB\xBFdata: b\n\n", 0, []Event{{Data: []byte("b"), Size: 1}}},
		{"unterminated last block", "data: a\n\ndata: tail", 0,
			[]Event{{Data: []byte("a"), Size: 1}, {Data: []byte("tail"), Size: 4}}},
		{"too long", "data: 0123456789\ndata: x\n\ndata: ok\n\n", 8,
			[]Event{{TooLong: true, Size: 12}, {Data: []byte("ok"), Size: 2}}},
		{"id with NUL ignored", "id: a\x00b\ndata: x\n\n", 0, []Event{{Data: []byte("x"), Size: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{1, 2, 3, 1 << 20} {
				got := decodeAll(t, tt.stream, tt.max, chunk)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("chunks of %d (-want +got):\n%s", chunk, diff)
				}
			}
		})
	}
}

func TestSSEReaderAndWriter(t *testing.T) {
	evs := []Event{
		{Comments: []string{"hello"}},
		{Type: "endpoint", Data: []byte("/messages?sessionId=1")},
		{ID: "s1-1", HasID: true, Retry: 100, HasRetry: true, Data: []byte("line1\nline2")},
		{Data: []byte(`{"jsonrpc":"2.0","method":"x"}`)},
	}
	var b strings.Builder
	for _, ev := range evs {
		if err := writeEvent(&b, ev); err != nil {
			t.Fatal(err)
		}
	}
	r := NewSSEReader(iotest.OneByteReader(strings.NewReader(b.String())), 0)
	var got []Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ev.Size = 0
		got = append(got, ev)
	}
	if diff := cmp.Diff(evs, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, id := range []string{"a\nb", "a\rb", "a\r\nb", "a\x00b"} {
		if err := writeEvent(io.Discard, Event{ID: id}); !errors.Is(err, ErrSSEField) {
			t.Errorf("the id %q: %v, want ErrSSEField", id, err)
		}
	}
}

// FuzzSSE checks that the decoder neither panics nor depends on how the
// stream is cut into chunks, and that what the writer writes reads back.
func FuzzSSE(f *testing.F) {
	f.Add("event: message\ndata: {}\nid: 1\n\n", 3)
	f.Add("data: a\r\ndata: b\r\r: c\n", 1)
	f.Add("\xEF\xBB\xBFretry: 10\n\n", 2)
	f.Fuzz(func(t *testing.T, stream string, chunk int) {
		if chunk <= 0 || chunk > 64 {
			chunk = 7
		}
		whole := decodeAll(t, stream, 64, 1<<20)
		cut := decodeAll(t, stream, 64, chunk)
		if diff := cmp.Diff(whole, cut); diff != "" {
			t.Fatalf("chunks of %d differ from the whole (-whole +chunks):\n%s", chunk, diff)
		}
		for _, ev := range whole {
			empty := !ev.HasData() && !ev.HasID && !ev.HasRetry && ev.Type == "" && len(ev.Comments) == 0
			if empty || ev.TooLong {
				continue
			}
			again := decodeAll(t, string(AppendEvent(nil, ev)), 64, 1<<20)
			if len(again) != 1 || string(again[0].Data) != string(ev.Data) || again[0].ID != ev.ID || again[0].Type != ev.Type {
				t.Fatalf("%q written and read back as %+v, want %+v", AppendEvent(nil, ev), again, ev)
			}
		}
	})
}
