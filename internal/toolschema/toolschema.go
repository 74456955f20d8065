// Package toolschema compiles the JSON Schemas of MCP tools (inputSchema,
// outputSchema) and explains validation failures, for the replay engine and
// the guard alike. Schemas are self-contained: nothing is loaded from files
// or the network, and a schema without $schema is JSON Schema 2020-12, as
// MCP says.
package toolschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled schema.
type Schema = jsonschema.Schema

// Compile compiles the schema kind ("input" or "output") of a tool.
func Compile(kind, tool string, raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	u := "mcpmock:/tools/" + url.PathEscape(tool) + "/" + kind + "Schema"
	if err := c.AddResource(u, doc); err != nil {
		return nil, err
	}
	return c.Compile(u)
}

type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("mcpmock loads no schema from outside the tool's own (%s)", u)
}

// Problems flattens a validation error into one line per failing place.
func Problems(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{OneLine(err.Error())}
	}
	var out []string
	var walk func(u jsonschema.OutputUnit)
	walk = func(u jsonschema.OutputUnit) {
		if len(u.Errors) == 0 && u.Error != nil {
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			out = append(out, loc+": "+u.Error.String())
		}
		for _, c := range u.Errors {
			walk(c)
		}
	}
	walk(*ve.BasicOutput())
	if len(out) == 0 {
		out = []string{OneLine(ve.Error())}
	}
	sort.Strings(out)
	return out
}

// OneLine folds white space, for messages on one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
