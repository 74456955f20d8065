package cassettes

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sample() *Cassette {
	c := New()
	c.Meta = Meta{Transport: "stdio", Server: []string{"srv"}}
	raw := "not json"
	c.Interactions = append(c.Interactions,
		Interaction{From: FromClient, AtMs: 1.23456, Request: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890}}}`),
			Exchange: []Message{{From: FromServer, AtMs: 2, Message: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)}},
			Response: &Message{From: FromServer, AtMs: 3, Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)}},
		Interaction{From: FromClient, AtMs: 4, Notification: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		Interaction{From: FromServer, AtMs: 5, Raw: &raw},
	)
	return c
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	if err := Save(path, sample()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"atMs": 1.235`) || !strings.Contains(string(data), "12345678901234567890") {
		t.Errorf("saved file lacks rounded time or exact big number:\n%s", data)
	}
	if !strings.Contains(string(data), "\n        \"method\": \"tools/call\"") {
		t.Errorf("messages are not pretty-printed objects:\n%s", data)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Encode(c)
	if string(again) != string(data) {
		t.Errorf("load+encode is not stable:\n%s\n---\n%s", data, again)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
		is               error
	}{
		{"syntax", "{\n  \"version\": 1,\n  \"interactions\": [\n    {\"from\": \"client\",, }\n  ]\n}", `line 4, column 23`, ErrInvalid},
		{"version", "{\n  \"version\": 2,\n  \"interactions\": []\n}", `line 2, column 3: unsupported cassette version: the file has format version 2, this mcpmock reads version 1`, ErrVersion},
		{"no version", `{"interactions": []}`, `no "version"`, ErrInvalid},
		{"unknown field", "{\"version\": 1,\n \"interactions\": [{\"from\":\"client\", \"reqest\": {}}]}", `line 2, column 37: invalid cassette: interaction 1: "reqest": unknown member`, ErrInvalid},
		{"bad interaction", "{\"version\": 1,\n \"interactions\": [\n  {\"from\":\"client\",\"atMs\":0,\"notification\":{\"jsonrpc\":\"2.0\",\"method\":\"a\"}},\n  {\"from\":\"client\",\"atMs\":0,\"request\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}}]}",
			`line 4, column 3: invalid cassette: interaction 2: request: is a JSON-RPC response, want a request`, ErrInvalid},
		{"truncated", `{"version": 1, "interactions": [`, `unexpected end`, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.json", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.is) {
				t.Fatalf("err = %v\nwant it to contain %q and be %v", err, tt.want, tt.is)
			}
			if !strings.HasPrefix(err.Error(), `load cassette "x.json": line `) {
				t.Errorf("error does not name file and line: %v", err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	data, _ := Encode(sample())
	f.Add(data)
	f.Add([]byte(`{"version":1,"interactions":[{"from":"server","raw":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.json", data)
		if err != nil {
			var pe *PosError
			if !errors.As(err, &pe) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		out, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse("again.json", out); err != nil {
			t.Fatalf("a loaded cassette does not load again: %v\n%s", err, out)
		}
	})
}

// TestLoadCompactsMessages: messages in a pretty-printed file load as one
// line each (a stdio message is one line), with member order and numbers kept.
func TestLoadCompactsMessages(t *testing.T) {
	data, _ := Encode(sample())
	c, err := Parse("x.json", data)
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.Interactions[0].Request)
	want := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890}}}`
	if got != want {
		t.Errorf("loaded request\n got %s\nwant %s", got, want)
	}
	if r := string(c.Interactions[0].Response.Message); strings.Contains(r, "\n") {
		t.Errorf("response spans lines: %q", r)
	}
}

// TestHandWritten: a person may leave out "from", "jsonrpc" and "id".
func TestHandWritten(t *testing.T) {
	c, err := Parse("o.json", []byte(`{"version":1,"interactions":[
	  {"request":{"method":"tools/call","params":{"name":"get_weather"}},
	   "when":{"nth":3},
	   "response":{"message":{"result":{"content":[],"isError":true}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	in := c.Interactions[0]
	if in.From != FromClient || in.Response.From != FromServer || !in.Scripted() {
		t.Errorf("defaults not filled: %+v", in)
	}
	if got := string(in.Request); got != `{"method":"tools/call","params":{"name":"get_weather"},"jsonrpc":"2.0","id":0}` {
		t.Errorf("request %s", got)
	}
	_, err = Parse("o.json", []byte(`{"version":1,"interactions":[{"request":{"method":"x"},"when":{"from":5,"to":2}}]}`))
	if err == nil || !strings.Contains(err.Error(), `"to" (2) is before "from" (5)`) {
		t.Errorf("bad when: %v", err)
	}
}
