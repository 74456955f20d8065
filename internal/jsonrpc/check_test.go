package jsonrpc

import (
	"fmt"
	"testing"
)

// TestCheckValidAgreesWithParseValid: CheckValid gives the kind and the
// error that ParseValid gives, and ParseValidInto the same message, for
// valid and invalid messages.
func TestCheckValidAgreesWithParseValid(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":"a\u0062","result":{"x":[1,2,{"y":"\""}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/m\u00e9"}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-32600,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		` { "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" } `,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`,
		`{"jsonrpc":2,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":3}`,
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","result":1}`,
		`{"jsonrpc":"2.0","id":1}`,
		`[{"jsonrpc":"2.0","method":"n"}]`,
		`"text"`,
		``,
	} {
		m, perr := ParseValid([]byte(s))
		want := KindInvalid
		if m != nil {
			want = m.Kind()
		}
		kind, cerr := CheckValid([]byte(s))
		if kind != want || fmt.Sprint(cerr) != fmt.Sprint(perr) {
			t.Errorf("%s: CheckValid %v, %v; ParseValid %v, %v", s, kind, cerr, want, perr)
		}
		into := Message{Method: "left over"}
		ierr := ParseValidInto(&into, []byte(s))
		if m == nil {
			m = &Message{}
		}
		if fmt.Sprint(ierr) != fmt.Sprint(perr) || fmt.Sprintf("%+v", into) != fmt.Sprintf("%+v", *m) {
			t.Errorf("%s: ParseValidInto %+v, %v; ParseValid %+v, %v", s, into, ierr, *m, perr)
		}
	}
}

// BenchmarkCheckValid is checking a request that is not kept, against
// ParseValid as the baseline.
func BenchmarkCheckValid(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`)
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			CheckValid(data)
		}
	})
	b.Run("baseline-parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ParseValid(data)
		}
	})
}
