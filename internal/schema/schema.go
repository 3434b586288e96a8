// Package schema compiles and applies JSON Schemas that dagent is handed —
// a task's output_schema, a tool's parameters — on
// github.com/santhosh-tekuri/jsonschema/v6, and turns the library's errors
// into one line of problems that a person or a model can act on.
//
// A schema is one self-contained document: compiling it never reads a file
// or the network, so that a plan or a registry cannot make dagent fetch
// anything. The JSON Schema meta-schemas are built into the library.
package schema

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// url is where a compiled document sits for the compiler: relative
// references resolve against it, and every one of them is refused.
const url = "mem:///schema.json"

// Schema is a compiled JSON Schema, safe for concurrent use. Create it
// with [Compile].
type Schema struct {
	s *jsonschema.Schema
}

// Compile compiles doc, a JSON Schema (draft 2020-12 unless its $schema
// says otherwise). A document that is not JSON, that breaks the rules of
// its draft, or that refers to any other document ("$ref" to a URL or a
// file, an unknown "$schema") is an error whose text lists the problems.
func Compile(doc []byte) (*Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, v); err != nil {
		return nil, &problemError{problems(err), err}
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, &problemError{problems(err), err}
	}
	// The compiler compiles a definition only when a reference reaches it:
	// compiling each one now refuses the references of those that none
	// reaches, as it refuses the others.
	for _, ptr := range definitions(v, "") {
		if _, err := c.Compile(url + "#" + ptr); err != nil {
			return nil, &problemError{problems(err), err}
		}
	}
	return &Schema{s}, nil
}

// definitions returns the JSON pointers, below at, of the definitions
// ("$defs", or "definitions" of the older drafts) of the schema v and of
// its definitions, at any depth. Definitions inside other keywords are
// compiled with the schema that holds them.
func definitions(v any, at string) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for _, kw := range []string{"$defs", "definitions"} {
		defs, ok := m[kw].(map[string]any)
		if !ok {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(defs)) {
			ptr := at + "/" + kw + "/" + pointerEscaper.Replace(name)
			out = append(out, ptr)
			out = append(out, definitions(defs[name], ptr)...)
		}
	}
	return out
}

// pointerEscaper escapes a key for a JSON pointer in a URL's fragment.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1", "%", "%25", "#", "%23", " ", "%20")

// Validate checks v, a JSON-shaped value: what encoding/json decodes into
// an any, numbers as json.Number or float64 (int and int64 do too). The
// error lists each problem with where it is in v, as "at /items/0: got
// number, want string; at /name: ...", without the library's URLs.
func (s *Schema) Validate(v any) error {
	if err := s.s.Validate(v); err != nil {
		return &problemError{problems(err), err}
	}
	return nil
}

// problemError is an error of the library told as problems; it unwraps
// to the library's error.
type problemError struct {
	text string
	err  error
}

func (e *problemError) Error() string { return e.text }
func (e *problemError) Unwrap() error { return e.err }

// noLoader refuses every document but the one compiled.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the schema; a schema may not refer to other documents", url)
}

var english = message.NewPrinter(language.English)

// problems is a one-line account of an error of the library: each leaf
// of a validation error (of a value, or of a schema against its
// meta-schema) with where it is, joined by "; ". Other errors, such as a
// refused reference, are told as the library tells them.
func problems(err error) string {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		err = se.Err
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	type leaf struct{ at, where, what string }
	var leaves []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			k := e.ErrorKind
			if ap, ok := k.(*kind.AdditionalProperties); ok {
				// The library names them in the order it met them, which
				// is map order.
				k = &kind.AdditionalProperties{Properties: slices.Sorted(slices.Values(ap.Properties))}
			}
			where := e.SchemaURL + "/" + strings.Join(k.KeywordPath(), "/")
			leaves = append(leaves, leaf{"/" + strings.Join(e.InstanceLocation, "/"), where, k.LocalizedString(english)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The library checks an object's properties, and the keywords of one
	// place, in map order: sorted by place, then by the schema's keyword,
	// the same value always reads the same — a diagnosis that retries,
	// replanners and replayed workflows compare.
	slices.SortStableFunc(leaves, func(a, b leaf) int {
		return cmp.Or(strings.Compare(a.at, b.at), strings.Compare(a.where, b.where))
	})
	out := make([]string, len(leaves))
	for i, l := range leaves {
		out[i] = "at " + l.at + ": " + l.what
	}
	return strings.Join(out, "; ")
}
