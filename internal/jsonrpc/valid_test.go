package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, s := range []string{
		`{}`, ` [ ] `, `{"a":[1,-0.5e+3,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9"]}`, `0`, `-0`, `1E9`,
		``, `{`, `{"a"}`, `{"a":}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`, "\"\x01\"", `"\u12"`, `tru`, `nul`, `{} {}`, `[1 2]`, `{"a":1,}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	} {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%.40q) = %v, encoding/json says %v", s, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5e-3,"\u0041",{"b":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}
