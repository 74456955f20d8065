package cassettes

import (
	_ "embed"
	"slices"
)

// The JSON Schema of the format, cassettes and overlays alike.
//
//go:embed cassette.schema.json
var schema []byte

// SchemaURL is where the JSON Schema of the format is published; written
// cassettes name it in their "$schema" member, so that an editor completes
// and checks a hand-written cassette or overlay.
const SchemaURL = "https://raw.githubusercontent.com/mcpmock/mcpmock/main/cassettes/cassette.schema.json"

// Schema returns the JSON Schema (draft 2020-12) of the cassette format,
// which `mcpmock cassette schema` prints. It describes what Load accepts:
// a file the schema refuses, Load refuses too.
func Schema() []byte { return slices.Clone(schema) }
