package cassettes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// This file decodes an interaction from its raw JSON with a scanner rather
// than with reflection: a large cassette loads several times faster, and
// the messages stay sub-slices of the interaction's bytes instead of being
// copied once more.

// fieldError is an error about the member key of an interaction.
type fieldError struct {
	key string
	err error
}

func (e *fieldError) Error() string { return fmt.Sprintf("%q: %v", e.key, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

// decodeInteraction decodes one interaction (valid JSON). Unknown members
// are errors, as with encoding/json's DisallowUnknownFields.
func decodeInteraction(raw []byte) (Interaction, error) {
	var in Interaction
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return in, errors.New("an interaction must be a JSON object")
	}
	err := jsonrpc.EachMember(raw, func(key string, v []byte) error {
		var err error
		switch key {
		case "from":
			in.From, err = direction(v)
		case "atMs":
			in.AtMs, err = millis(v)
		case "request":
			in.Request = rawOrNil(v)
		case "notification":
			in.Notification = rawOrNil(v)
		case "raw":
			in.Raw, err = strPtr(v)
		case "batch":
			in.Batch, err = integer(v)
		case "exchange":
			if isNull(v) {
				break
			}
			err = jsonrpc.EachElement(v, func(e []byte) error {
				m, err := decodeMessage(e)
				if err == nil {
					in.Exchange = append(in.Exchange, m)
				}
				return err
			})
		case "response":
			if isNull(v) {
				break
			}
			var m Message
			if m, err = decodeMessage(v); err == nil {
				in.Response = &m
			}
		case "match":
			in.Match = rawOrNil(v)
		case "times":
			in.Times, err = integer(v)
		// Decoded through a variable of their own, so that in is not
		// moved to the heap for every interaction.
		case "http":
			var h *HTTP
			err = strict(v, &h)
			in.HTTP = h
		case "when":
			var w *When
			err = strict(v, &w)
			in.When = w
		case "fault":
			var f *Fault
			err = strict(v, &f)
			in.Fault = f
		default:
			err = errors.New("unknown member")
		}
		if err != nil {
			return &fieldError{key, err}
		}
		return nil
	})
	return in, err
}

func decodeMessage(raw []byte) (Message, error) {
	var m Message
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return m, errors.New("a message must be a JSON object")
	}
	err := jsonrpc.EachMember(raw, func(key string, v []byte) error {
		var err error
		switch key {
		case "from":
			m.From, err = direction(v)
		case "atMs":
			m.AtMs, err = millis(v)
		case "message":
			m.Message = rawOrNil(v)
		case "raw":
			m.Raw, err = strPtr(v)
		case "batch":
			m.Batch, err = integer(v)
		default:
			err = errors.New("unknown member")
		}
		if err != nil {
			return &fieldError{key, err}
		}
		return nil
	})
	return m, err
}

// direction decodes a "from" member; the two directions are not copied,
// one string each for a whole cassette.
func direction(v []byte) (Direction, error) {
	switch string(v) {
	case `"client"`:
		return FromClient, nil
	case `"server"`:
		return FromServer, nil
	}
	s, err := str(v)
	return Direction(s), err
}

func isNull(v []byte) bool { return string(v) == "null" }

func rawOrNil(v []byte) json.RawMessage {
	if isNull(v) {
		return nil
	}
	return json.RawMessage(v)
}

func str(v []byte) (string, error) {
	s, ok := jsonrpc.Unquote(v)
	if !ok {
		return "", fmt.Errorf("want a string, not %.20s", v)
	}
	return s, nil
}

func strPtr(v []byte) (*string, error) {
	if isNull(v) {
		return nil, nil
	}
	s, err := str(v)
	return &s, err
}

func millis(v []byte) (Millis, error) {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, fmt.Errorf("want a number, not %.20s", v)
	}
	return Millis(f), nil
}

func integer(v []byte) (int, error) {
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("want an integer, not %.20s", v)
	}
	return n, nil
}

// strict decodes a small structured member with encoding/json, refusing
// unknown members.
func strict(v []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// reserve grows the interactions of a cassette being decoded once, when
// the first 64 are in, to the number that the whole array (size bytes, of
// which the next interaction starts at offset next) holds at their average
// size, and a little more: a large cassette then fills one slice of about
// the right size instead of growing it by copies, or reserving far more
// than it needs. Append grows it past that when the guess is short.
func reserve(ins []Interaction, size, next int) []Interaction {
	if len(ins) != 64 || cap(ins) > 64 || next <= 0 {
		return ins
	}
	want := int(int64(size) * 64 / int64(next))
	want += want/16 + 16
	return slices.Grow(ins, want-len(ins))
}
