package plan

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// node is a JSON value that remembers where it starts in the source, so that
// every problem can point at a line and column. Object members keep their
// source order, which named workflow phases rely on.
type node struct {
	kind jsontext.Kind // '{', '[', '"', '0', 't', 'f' or 'n'
	off  int           // byte offset of the value's first byte in the source
	text string        // unescaped string, or the raw text of a number or literal
	keys []string      // object member names, parallel to vals
	vals []node        // object member values or array elements
}

func (n node) isNull() bool { return n.kind == 'n' }

// get returns the member named key of an object node.
func (n node) get(key string) (node, bool) {
	if n.kind != '{' {
		return node{}, false
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i], true
		}
	}
	return node{}, false
}

// kindName describes a node's kind for error messages.
func (n node) kindName() string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// source is the text Parse was given, with a lazily built line index.
type source struct {
	data  []byte
	lines []int // byte offsets at which lines start
}

func (s *source) pos(off int) Position {
	if s.lines == nil {
		s.lines = append(s.lines, 0)
		for i, c := range s.data {
			if c == '\n' {
				s.lines = append(s.lines, i+1)
			}
		}
	}
	off = min(max(off, 0), len(s.data))
	line := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	col := utf8.RuneCount(s.data[s.lines[line]:off]) + 1
	return Position{Line: line + 1, Column: col}
}

// syntaxError is a JSON syntax error at an absolute offset.
type syntaxError struct {
	off       int
	truncated bool
	msg       string
}

func (e *syntaxError) Error() string { return e.msg }

// readTree reads one JSON value starting at src[start] and returns it with the
// offset just past it.
func readTree(src []byte, start int) (node, int, error) {
	r := &treeReader{src: src, start: start}
	r.dec = jsontext.NewDecoder(bytes.NewBuffer(src[start:]))
	n, err := r.value()
	if err != nil {
		return node{}, 0, r.syntaxError(err)
	}
	return n, start + int(r.dec.InputOffset()), nil
}

type treeReader struct {
	src   []byte
	start int
	dec   *jsontext.Decoder
	// Children are gathered on these stacks and copied out once a
	// container ends, so that each container costs one exact allocation.
	vals []node
	keys []string
}

// next returns the absolute offset of the next token: the decoder's offset
// points just past the previous token, before any separator or space.
func (r *treeReader) next() int {
	off := r.start + int(r.dec.InputOffset())
	for off < len(r.src) {
		switch r.src[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func (r *treeReader) value() (node, error) {
	off := r.next()
	switch kind := r.dec.PeekKind(); kind {
	case '{', '[':
		if _, err := r.dec.ReadToken(); err != nil {
			return node{}, err
		}
		n := node{kind: kind, off: off}
		end := jsontext.Kind('}')
		if kind == '[' {
			end = ']'
		}
		base, kbase := len(r.vals), len(r.keys)
		for r.dec.PeekKind() != end {
			if kind == '{' {
				name, err := r.dec.ReadValue()
				if err != nil {
					return node{}, err
				}
				r.keys = append(r.keys, intern(name))
			}
			v, err := r.value()
			if err != nil {
				return node{}, err
			}
			r.vals = append(r.vals, v)
		}
		if _, err := r.dec.ReadToken(); err != nil {
			return node{}, err
		}
		n.vals = slices.Clone(r.vals[base:])
		r.vals = r.vals[:base]
		if kind == '{' {
			n.keys = slices.Clone(r.keys[kbase:])
			r.keys = r.keys[:kbase]
		}
		return n, nil
	default:
		raw, err := r.dec.ReadValue()
		if err != nil {
			return node{}, err
		}
		return node{kind: kind, off: off, text: unquote(raw)}, nil
	}
}

// unquote returns a string value's text, or the raw text of a number or a
// literal.
func unquote(raw jsontext.Value) string {
	if len(raw) == 0 || raw[0] != '"' {
		return string(raw)
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return string(raw) // unreachable: the decoder validated the string
	}
	return string(s)
}

// commonKeys are the object keys of nearly every plan; interning them saves
// an allocation per key per task.
var commonKeys = func() map[string]string {
	m := make(map[string]string)
	for k := range taskAliases {
		m[k] = k
	}
	for _, list := range [][]string{phaseNameKeys, phaseTaskKeys, planTaskKeys, planAgentKeys, planMissionKeys, agentPromptKeys, agentToolKeys, inputFromKeys, inputSlotKeys, {"plan", "model"}} {
		for _, k := range list {
			m[k] = k
		}
	}
	return m
}()

// intern returns an object member name as a string, without allocating for
// the common keys.
func intern(raw jsontext.Value) string {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		if k, ok := commonKeys[string(raw[1:len(raw)-1])]; ok {
			return k
		}
	}
	return unquote(raw)
}

func (r *treeReader) syntaxError(err error) *syntaxError {
	off := r.start + int(r.dec.InputOffset())
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off = r.start + int(se.ByteOffset)
		err = se.Err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &syntaxError{off: len(r.src), truncated: true, msg: "unexpected end of input: the JSON is truncated"}
	}
	return &syntaxError{off: off, msg: err.Error()}
}
