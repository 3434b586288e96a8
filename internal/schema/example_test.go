package schema_test

import (
	"fmt"

	"github.com/dagent-dev/dagent/internal/schema"
)

func ExampleCompile() {
	_, err := schema.Compile([]byte(`{"$ref": "https://example.com/s.json"}`))
	fmt.Println(err)
	// Output: failing loading "https://example.com/s.json": https://example.com/s.json is outside the schema; a schema may not refer to other documents
}

func ExampleSchema_Validate() {
	s, _ := schema.Compile([]byte(`{"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {"type": "string"}}}}`))
	fmt.Println(s.Validate(map[string]any{"items": []any{"a", 2}}))
	fmt.Println(s.Validate(map[string]any{"items": []any{"a"}}))
	// Output:
	// at /items/1: got number, want string
	// <nil>
}
