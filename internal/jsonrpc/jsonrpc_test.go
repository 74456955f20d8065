package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func TestParseKinds(t *testing.T) {
	tests := []struct {
		in   string
		kind Kind
		id   ID
		code int // expected *Error code, 0 for none
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, KindRequest, "1", 0},
		{`{"jsonrpc":"2.0","id":"1","method":"tools/list"}`, KindRequest, `"1"`, 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, "", 0},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, KindResponse, "7", 0},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, KindResponse, "null", 0},
		{`{"jsonrpc":"1.0","id":1,"method":"x"}`, KindRequest, "1", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, KindRequest, "{}", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, KindRequest, "null", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":3}`, KindRequest, "1", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1}`, KindInvalid, "1", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","method":1}`, KindInvalid, "", CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			var je *Error
			if tt.code == 0 && err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.code != 0 && (!errors.As(err, &je) || je.Code != tt.code) {
				t.Fatalf("Parse error = %v, want code %d", err, tt.code)
			}
			if m.Kind() != tt.kind || m.ID != tt.id {
				t.Errorf("kind, id = %v, %q; want %v, %q", m.Kind(), m.ID, tt.kind, tt.id)
			}
		})
	}
}

func TestParseSyntaxError(t *testing.T) {
	for _, in := range []string{`{"jsonrpc":`, "\x00\xff garbage", `[1,2`, `{"a":1}}`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}

func TestSetMemberKeepsBytes(t *testing.T) {
	in := `{"jsonrpc":"2.0", "id": 17 ,"result":{"big":12345678901234567890,"id":3}}`
	out, err := WithID([]byte(in), `"abc"`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0", "id": "abc" ,"result":{"big":12345678901234567890,"id":3}}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	for _, c := range []struct {
		in   string
		id   ID
		want string
	}{
		{`{"id":1,"result":{}}`, "", `{"id":null,"result":{}}`},
		{`{"result":{}}`, "7", `{"result":{},"id":7}`},
		{`{"id":"x","error":{"code":1,"message":"m"}}`, "12", `{"id":12,"error":{"code":1,"message":"m"}}`},
	} {
		if out, err := WithID([]byte(c.in), c.id); err != nil || string(out) != c.want {
			t.Errorf("WithID(%s, %q) = %s, %v; want %s", c.in, c.id, out, err, c.want)
		}
	}
	out, err = SetMember([]byte(`{"params":{"progressToken":1,"progress":2}}`), []byte(`"tok"`), "params", "progressToken")
	if err != nil || string(out) != `{"params":{"progressToken":"tok","progress":2}}` {
		t.Errorf("nested: %s, %v", out, err)
	}
	out, err = SetMember([]byte(`{}`), []byte(`1`), "id")
	if err != nil || string(out) != `{"id":1}` {
		t.Errorf("add to empty: %s, %v", out, err)
	}
	out, err = SetMember([]byte(`{"a":"x\"}"}`), []byte(`1`), "id")
	if err != nil || string(out) != `{"a":"x\"}","id":1}` {
		t.Errorf("add after escaped string: %s, %v", out, err)
	}
}

func TestDeleteMember(t *testing.T) {
	tests := []struct{ in, key, want string }{
		{`{"a":1,"b":2}`, "a", `{"b":2}`},
		{`{"a":1,"b":2}`, "b", `{"a":1}`},
		{`{"a":1}`, "a", `{}`},
		{`{"a":1}`, "z", `{"a":1}`},
		{`{"x\"":1, "b" : [1,{"c":2}]}`, "b", `{"x\"":1}`},
	}
	for _, tt := range tests {
		got, err := DeleteMember([]byte(tt.in), tt.key)
		if err != nil || string(got) != tt.want {
			t.Errorf("DeleteMember(%s, %s) = %s, %v; want %s", tt.in, tt.key, got, err, tt.want)
		}
	}
}

func TestLineReader(t *testing.T) {
	big := strings.Repeat("x", 200_000)
	in := "a\r\n\n" + big + "\n" + strings.Repeat("y", 1001) + "\nlast"
	lr := NewLineReader(strings.NewReader(in), 500_000)
	var got []string
	for {
		l, err := lr.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l))
	}
	if len(got) != 4 || got[0] != "a" || got[1] != big || len(got[2]) != 1001 || got[3] != "last" {
		t.Errorf("lines = %d %q", len(got), got[0])
	}

	lr = NewLineReader(strings.NewReader(strings.Repeat("z", 3000)+"\nnext\n"), 1000)
	_, err := lr.ReadLine()
	var tl *LineTooLongError
	if !errors.As(err, &tl) || !errors.Is(err, ErrLineTooLong) || tl.Len != 3001 {
		t.Fatalf("err = %v, want LineTooLongError of 3001", err)
	}
	l, err := lr.ReadLine()
	if err != nil || string(l) != "next" {
		t.Errorf("after a long line: %q, %v", l, err)
	}
}

func TestBatch(t *testing.T) {
	elems, batch, err := SplitBatch([]byte(` [{"a":1}, {"b":2}]`))
	if err != nil || !batch || len(elems) != 2 {
		t.Fatalf("SplitBatch = %v %v %v", elems, batch, err)
	}
	if got := string(JoinBatch([][]byte{elems[0], elems[1]})); got != `[{"a":1},{"b":2}]` {
		t.Errorf("JoinBatch = %s", got)
	}
	if _, batch, _ := SplitBatch([]byte(`{"a":1}`)); batch {
		t.Error("an object is not a batch")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","result":{"x":[1,2,{"y":"\""}]}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","method":"n"}]`))
	// A member that is not JSON-RPC before a syntax error: the syntax
	// error wins.
	f.Add([]byte(`{"jsonrpc":"2.0","method":1,"id":}`))
	f.Add([]byte(`{"method":"m","jsonrpc":2} x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		checkOnePass(t, data, m, err)
		if err == nil {
			if m.Kind() == KindInvalid {
				t.Fatalf("valid message of invalid kind: %s", data)
			}
			out, err := WithID(m.Raw, "42")
			if err != nil {
				t.Fatalf("WithID on a valid message: %v", err)
			}
			m2, err := Parse(out)
			if err != nil || m2.ID != "42" {
				t.Fatalf("WithID broke %s into %s: %v", data, out, err)
			}
		}
		SplitBatch(data)
	})
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\nc"), 4)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			max = 16
		}
		lr := NewLineReader(strings.NewReader(string(data)), max)
		for range len(data) + 2 {
			l, err := lr.ReadLine()
			if err == io.EOF {
				return
			}
			if err == nil && len(l) > max {
				t.Fatalf("line of %d past max %d", len(l), max)
			}
		}
		t.Fatal("reader did not reach EOF")
	})
}

// checkOnePass fails when Parse, which checks the syntax and reads the
// members in one pass, says other than checking the whole first (Valid)
// and then reading the members (ParseValid).
func checkOnePass(t *testing.T, data []byte, m *Message, err error) {
	t.Helper()
	d := bytes.TrimSpace(data)
	var want *Message
	var wantErr error
	if !Valid(d) {
		wantErr = fmt.Errorf("jsonrpc: parse: %w", syntaxError(d))
	} else {
		want, wantErr = ParseValid(d)
	}
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("Parse(%q): error %v, the two passes: %v", data, err, wantErr)
	}
	if (m == nil) != (want == nil) {
		t.Fatalf("Parse(%q): message %v, the two passes: %v", data, m, want)
	}
	if m != nil && !reflect.DeepEqual(m, want) {
		t.Fatalf("Parse(%q):\n%+v\nthe two passes:\n%+v", data, m, want)
	}
}

// TestParseOnePass: the cases where one pass could judge otherwise than
// two: a member that is not JSON-RPC before a syntax error, duplicates,
// what follows the object, and each kind of message.
func TestParseOnePass(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":1,"id":}`,
		`{"jsonrpc":"2.0","method":1}`,
		`{"method":"m","jsonrpc":2} x`,
		`{"method":"m","jsonrpc":"2.0"}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":null}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`,
		`{"jsonrpc":"2.0","method":"n","params":[1,{"a":"\u00e9"}]}`,
		` {"jsonrpc" : "2.0" , "method" : "n" } `,
		`{"\u006aspnrpc":"2.0"}`,
		`{"\u006asonrpc":"2.0","\u0069d":1,"m\u0065thod":"ping","par\u0061ms":{}}`,
		`{}`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[]`, `7`, ``, `{"a":1 "b":2}`,
	} {
		m, err := Parse([]byte(s))
		checkOnePass(t, []byte(s), m, err)
	}
}

// ParseViewInto reads what ParseInto reads, the id a view of the data and
// not a string of its own: a response parses without allocating.
func TestParseViewInto(t *testing.T) {
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"m0"}]}}`,
		`{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":1}`,
		`[1]`,
	} {
		data := []byte(raw)
		var want, got Message
		werr, gerr := ParseInto(&want, data), ParseViewInto(&got, data)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: ParseViewInto %+v, %v; ParseInto %+v, %v", raw, got, gerr, want, werr)
		}
		if got.ID != "" {
			at := bytes.Index(data, []byte(got.ID))
			if unsafe.StringData(string(got.ID)) != &data[at] || unsafe.StringData(string(want.ID)) == &data[at] {
				t.Errorf("%s: the id of ParseViewInto is not a view of the data, or ParseInto's is", raw)
			}
		}
	}
	if raceEnabled {
		return // allocation counts are checked without -race
	}
	data := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"m0"}]}}`)
	var m Message
	if n := testing.AllocsPerRun(100, func() { ParseViewInto(&m, data) }); n != 0 {
		t.Errorf("ParseViewInto of a response allocates %v times, want 0", n)
	}
}

// TestEscapedMemberNames: a member's name is read whether or not it is
// written with escapes (the parse compares the names as written when they
// have none).
func TestEscapedMemberNames(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1}}`,
		`{"\u006asonrpc":"2.0","\u0069d":1,"m\u0065thod":"ping","par\u0061ms":{"a":1}}`,
	} {
		m, err := Parse([]byte(s))
		if err != nil {
			t.Fatalf("Parse(%s): %v", s, err)
		}
		if m.Kind() != KindRequest || m.Method != "ping" || m.ID != "1" || string(m.Params) != `{"a":1}` {
			t.Errorf("Parse(%s): kind %v, method %q, id %q, params %s", s, m.Kind(), m.Method, m.ID, m.Params)
		}
	}
	if _, err := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","\ud800x":1}`)); err != nil {
		t.Errorf("a name with a lone surrogate escape: %v", err)
	}
}
