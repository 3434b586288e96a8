// Package jsonv reads and writes JSON values the one way dagent handles them
// everywhere: numbers kept exact as [encoding/json.Number], one value per
// document, and no HTML escaping on output, since predicates and prompts
// compare with <, > and &.
package jsonv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is how deeply arrays and objects may nest in a value that
// [Normalize] accepts: far deeper than data needs, and far enough below
// encoding/json's own limit of 10000 levels that the value still encodes
// and decodes inside the documents that carry it, a run's result or a
// worker's request.
const MaxDepth = 1000

// ErrTooDeep is matched by the error of [Normalize] for a value whose
// arrays and objects nest deeper than [MaxDepth].
var ErrTooDeep = errors.New("nested too deep")

// ErrTrailing is the error of [Decode] and [DecodeBytes] when more than
// white space follows the JSON value.
var ErrTrailing = errors.New("trailing data after the JSON value")

// Decode reads exactly one JSON value from r into maps, slices, strings,
// booleans, nil and [json.Number]. Anything but white space after the value
// is an error matching [ErrTrailing].
func Decode(r io.Reader) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrTrailing
	}
	return v, nil
}

// DecodeBytes is [Decode] of data.
func DecodeBytes(data []byte) (any, error) {
	return Decode(bytes.NewReader(data))
}

// Marshal returns v as compact JSON without HTML escaping and without a
// trailing newline. Map keys come out sorted, as with encoding/json.
func Marshal(v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		// A worker's output is often one long string: written straight
		// into a slice of its size, it is copied once.
		return AppendString(make([]byte, 0, len(s)+2), s), nil
	}
	var b appender
	if err := Encode(&b, v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}

// AppendString appends s to b as [Marshal] writes it, a JSON string, and
// returns the extended slice.
func AppendString(b []byte, s string) []byte {
	if plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var a appender
	_ = Encode(&a, s) // a string always encodes
	return append(b, bytes.TrimSuffix(a, []byte("\n"))...)
}

// plain tells whether encoding/json, not escaping HTML, writes s as it
// is between quotes: no quote, backslash or control character, and valid
// UTF-8 without U+2028 or U+2029, which it escapes for JavaScript.
func plain(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < ' ' || c == '"' || c == '\\' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += n
	}
	return true
}

// appender appends what is written to it. encoding/json's Encoder writes
// a value in one Write, from a scratch buffer it reuses: appended to an
// empty appender, the value is copied once into a slice of about its
// size, where a growing buffer would copy it again at each doubling.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}

// Encode writes v to w as one line of compact JSON, without HTML
// escaping, followed by a newline.
func Encode(w io.Writer, v any) error {
	return EncodeIndent(w, v, "")
}

// EncodeIndent writes v to w as JSON indented by indent per level (compact
// when indent is empty), without HTML escaping, followed by a newline.
func EncodeIndent(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}

// Normalize makes v JSON-shaped: what [Decode] would return for v's JSON,
// so that predicates, paths and templates see maps and slices rather than
// Go structs. A value that is JSON-shaped all the way down is returned as
// it is (float64, int and int64 numbers included), without a copy; anything
// else goes through encoding/json once, numbers coming back as [json.Number].
// A value encoding/json cannot encode is an error, and so is one nested
// deeper than [MaxDepth], matching [ErrTooDeep].
func Normalize(v any) (any, error) {
	switch shape(v, 0) {
	case isShaped:
		return v, nil
	case isTooDeep:
		return nil, errTooDeep()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("a value of type %T is not JSON-shaped: %w", v, err)
	}
	out, err := DecodeBytes(b)
	if err != nil {
		return nil, fmt.Errorf("a value of type %T is not JSON-shaped: %w", v, err)
	}
	if shape(out, 0) == isTooDeep {
		return nil, errTooDeep()
	}
	return out, nil
}

func errTooDeep() error {
	return fmt.Errorf("%w: more than %d levels of arrays and objects", ErrTooDeep, MaxDepth)
}

// shapeKind is what shape finds of a value.
type shapeKind uint8

const (
	isShaped  shapeKind = iota // JSON-shaped all the way down
	isForeign                  // needs a conversion
	isTooDeep                  // JSON-shaped, but deeper than MaxDepth
)

// shape tells whether v, found at depth levels of nesting, needs no
// conversion to be JSON-shaped, and whether it nests too deep.
func shape(v any, depth int) shapeKind {
	switch c := v.(type) {
	case nil, string, bool, json.Number, float64, int, int64:
		return isShaped
	case map[string]any:
		if depth++; depth > MaxDepth {
			return isTooDeep
		}
		for _, x := range c {
			if k := shape(x, depth); k != isShaped {
				return k
			}
		}
		return isShaped
	case []any:
		if depth++; depth > MaxDepth {
			return isTooDeep
		}
		for _, x := range c {
			if k := shape(x, depth); k != isShaped {
				return k
			}
		}
		return isShaped
	}
	return isForeign
}

// Text is how a value reads as text, in a task's input or a prompt: a
// string as it is, a [json.RawMessage] as it is written, anything else as
// compact JSON ([Marshal]); a value encoding/json cannot encode as fmt
// prints it.
func Text(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case json.RawMessage:
		return string(s)
	case json.Number:
		return s.String()
	}
	b, err := Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Lookup follows a dotted path into JSON-shaped data, as a task's
// templates read a result: object keys, and indexes for arrays. An empty
// path is the value itself; a step that does not exist reports false.
func Lookup(v any, path string) (any, bool) {
	for path != "" {
		var key string
		key, path, _ = strings.Cut(path, ".")
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[key]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}
