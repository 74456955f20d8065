package cassettes

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles the embedded schema.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// repoCassettes returns every cassette and overlay of the repository: the
// JSON files under testdata and examples, and the cassette.json sections of
// the replay transcripts.
func repoCassettes(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		name := d.Name()
		switch {
		case strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, "package") && name != "cassette.schema.json":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(`"interactions"`)) {
				files[path] = b
			}
		case strings.HasSuffix(name, ".txtar") && strings.Contains(path, "transcripts"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if _, after, ok := bytes.Cut(b, []byte("\n-- cassette.json --\n")); ok {
				if i := bytes.Index(after, []byte("\n-- ")); i >= 0 {
					after = after[:i]
				}
				files[path+"#cassette.json"] = after
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSchemaAcceptsEveryCassette: every cassette and overlay in the
// repository is valid against the schema and loads, so that the schema
// describes the format as Load reads it.
func TestSchemaAcceptsEveryCassette(t *testing.T) {
	s := compileSchema(t)
	files := repoCassettes(t)
	if len(files) < 20 {
		t.Fatalf("found %d cassettes in the repository, want the testdata, examples and transcripts", len(files))
	}
	for path, b := range files {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%s: the schema refuses a cassette of the repository: %v", path, err)
		}
	}
}

// TestSchemaRefusesWhatLoadRefuses: mistakes of a hand-written cassette
// are caught by the schema (in an editor) as by Load.
func TestSchemaRefusesWhatLoadRefuses(t *testing.T) {
	s := compileSchema(t)
	good := `{"version": 1, "interactions": [{"from": "client", "atMs": 0,
  "request": {"jsonrpc": "2.0", "id": 1, "method": "ping"},
  "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}}}]}`
	for _, tc := range []struct {
		name, from, to string
		// matchOnly: Load leaves "match" to package matcher, which refuses
		// it when the replay starts and in cassette lint.
		matchOnly bool
	}{
		{"good", "", "", false},
		{"another version", `"version": 1`, `"version": 2`, false},
		{"an unknown member", `"atMs": 0,`, `"atMs": 0, "color": "red",`, false},
		{"a direction that does not exist", `"from": "client"`, `"from": "browser"`, false},
		{"a response that is not an object", `"response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}}`, `"response": "ok"`, false},
		{"an unknown fault", `"atMs": 0,`, `"atMs": 0, "fault": {"explode": true},`, false},
		{"a match rule of an unknown kind", `"atMs": 0,`, `"atMs": 0, "match": {"fuzzy": ["arguments.x"]},`, true},
		{"an unknown top-level member", `"version": 1`, `"version": 1, "cassette": {}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(good, tc.from, tc.to, 1)
			if doc == good && tc.from != "" {
				t.Fatal("the replacement did not apply")
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			schemaErr := s.Validate(v)
			_, loadErr := Parse("x.json", []byte(doc))
			if tc.from == "" {
				if schemaErr != nil || loadErr != nil {
					t.Fatalf("a good cassette: schema %v, load %v", schemaErr, loadErr)
				}
				return
			}
			if schemaErr == nil {
				t.Errorf("the schema accepts it (load: %v)", loadErr)
			}
			if loadErr == nil && !tc.matchOnly {
				t.Errorf("Load accepts it (schema: %v)", schemaErr)
			}
		})
	}
	var m map[string]any
	if err := json.Unmarshal(Schema(), &m); err != nil || m["$id"] != SchemaURL {
		t.Errorf("the schema's $id is %v, want SchemaURL %s (err %v)", m["$id"], SchemaURL, err)
	}
}

// TestWrittenFilesNameTheSchema: a written cassette names the schema in its
// first member, so that an editor finds it, and reading it back keeps it.
func TestWrittenFilesNameTheSchema(t *testing.T) {
	b, err := Encode(New())
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"$schema\": \"" + SchemaURL + "\",\n  \"version\": 1,"; !strings.HasPrefix(string(b), want) {
		t.Errorf("Encode writes\n%s\nwant it to start with\n%s", b, want)
	}
	c, err := Parse("x.json", b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Schema != SchemaURL {
		t.Errorf("read back, $schema is %q", c.Schema)
	}
	if _, err := Parse("x.json", []byte(`{"$schema": 1, "version": 1, "interactions": []}`)); err == nil {
		t.Error("a $schema that is not a string is accepted")
	}
}
