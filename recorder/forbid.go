package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Forbidden is a value that must never be written into a cassette (a token
// the redaction rules ought to have caught). Name is how errors refer to it,
// never the value itself: "$API_KEY", "--forbid #1".
type Forbidden struct {
	Name, Value string
}

// ErrForbiddenValue is the error of a save refused because the cassette
// would contain a Forbidden value.
var ErrForbiddenValue = errors.New("the cassette would contain a forbidden value")

// forbidWriter passes writes on to w until one of the values appears in
// the stream (as is, or escaped as in a JSON string), then fails. It looks
// across write boundaries.
type forbidWriter struct {
	w      io.Writer
	values []Forbidden
	needle [][]byte // per value: the forms it may take in JSON
	tail   []byte   // the end of what was written, for matches across writes
	keep   int
	err    error
}

func newForbidWriter(w io.Writer, values []Forbidden) *forbidWriter {
	f := &forbidWriter{w: w}
	for _, v := range values {
		if v.Value == "" {
			continue
		}
		f.values = append(f.values, v)
		forms := [][]byte{[]byte(v.Value)}
		if q, _ := json.Marshal(v.Value); !bytes.Equal(q[1:len(q)-1], []byte(v.Value)) {
			forms = append(forms, q[1:len(q)-1])
		}
		for _, b := range forms {
			f.keep = max(f.keep, len(b)-1)
		}
		f.needle = append(f.needle, bytes.Join(forms, []byte{0}))
	}
	return f
}

func (f *forbidWriter) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	window := append(f.tail, p...)
	for i, n := range f.needle {
		for _, form := range bytes.Split(n, []byte{0}) {
			if bytes.Contains(window, form) {
				f.err = fmt.Errorf("%w (%s): add a redaction rule for it; the cassette is left as it was", ErrForbiddenValue, f.values[i].Name)
				return 0, f.err
			}
		}
	}
	if k := min(f.keep, len(window)); k > 0 {
		f.tail = append(f.tail[:0], window[len(window)-k:]...)
	} else {
		f.tail = f.tail[:0]
	}
	return f.w.Write(p)
}
