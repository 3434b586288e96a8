package plan

import (
	"bytes"
	_ "embed"
)

//go:embed schema.json
var schema []byte

// Schema returns the JSON Schema (draft 2020-12) of the canonical plan.
func Schema() []byte { return bytes.Clone(schema) }
