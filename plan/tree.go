package plan

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// maxSource is the largest document a tree can address: offsets are int32
// so that the tree holds no pointers and costs the garbage collector nothing.
const maxSource = math.MaxInt32

// tree is a parsed JSON document. Its records hold only offsets into the
// source, so a 10,000-task plan is one pointer-free allocation; text is
// decoded when the parser asks for it.
type tree struct {
	src  []byte
	recs []rec
}

// rec is one JSON value: its kind, where its raw text lies in the source,
// the name it has as an object member, and its children, which sit next to
// each other in tree.recs.
type rec struct {
	kind          jsontext.Kind // '{', '[', '"', '0', 't', 'f' or 'n'
	off, end      int32         // raw text of the value: src[off:end]
	nameOff, name int32         // raw text of its member name: src[nameOff:name]
	first, count  int32         // children: recs[first : first+count]
}

// node is a value of a tree. Object members keep their source order, which
// named workflow phases rely on.
type node struct {
	t *tree
	rec
}

func (n node) isNull() bool { return n.kind == 'n' }

// pos is the byte offset of the value's first byte in the source.
func (n node) pos() int { return int(n.off) }

// text returns a string's unescaped text, or the raw text of a number or a
// literal.
func (n node) text() string { return unquote(n.t.src[n.off:n.end]) }

// raw returns a string's text as it sits in the source, without quotes; it
// differs from text when the string holds escapes.
func (n node) raw() []byte {
	if n.kind != '"' {
		return n.t.src[n.off:n.end]
	}
	return n.t.src[n.off+1 : n.end-1]
}

// interner shares the strings of values that repeat across a plan, such as
// agent names and task ids in depends_on.
type interner map[string]string

func (in *interner) intern(n node) string {
	raw := n.raw()
	if bytes.IndexByte(raw, '\\') >= 0 {
		return n.text()
	}
	if s, ok := (*in)[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if *in == nil {
		*in = make(interner)
	}
	(*in)[s] = s
	return s
}

// len returns the number of elements or members.
func (n node) len() int { return int(n.count) }

// elems iterates over the elements of an array or the values of an object.
func (n node) elems() iter.Seq[node] {
	return func(yield func(node) bool) {
		for _, r := range n.t.recs[n.first : n.first+n.count] {
			if !yield(node{n.t, r}) {
				return
			}
		}
	}
}

// members iterates over the names and values of an object.
func (n node) members() iter.Seq2[string, node] {
	return func(yield func(string, node) bool) {
		for _, r := range n.t.recs[n.first : n.first+n.count] {
			if !yield(intern(n.t.src[r.nameOff:r.name]), node{n.t, r}) {
				return
			}
		}
	}
}

// get returns the member named key of an object node.
func (n node) get(key string) (node, bool) {
	if n.kind != '{' {
		return node{}, false
	}
	for _, r := range n.t.recs[n.first : n.first+n.count] {
		if nameIs(n.t.src[r.nameOff:r.name], key) {
			return node{n.t, r}, true
		}
	}
	return node{}, false
}

// nameIs reports whether a raw member name spells key.
func nameIs(raw []byte, key string) bool {
	if len(raw) == len(key)+2 && string(raw[1:len(raw)-1]) == key {
		return true
	}
	return bytes.IndexByte(raw, '\\') >= 0 && unquote(raw) == key
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
	r := &treeReader{t: &tree{src: src}, start: start}
	// About one value per 12 bytes of JSON, so the arena rarely grows.
	r.t.recs = make([]rec, 0, (len(src)-start)/12+1)
	r.dec = jsontext.NewDecoder(bytes.NewBuffer(src[start:]))
	root, err := r.value()
	if err != nil {
		return node{}, 0, r.syntaxError(err)
	}
	return node{r.t, root}, start + int(r.dec.InputOffset()), nil
}

type treeReader struct {
	t     *tree
	start int
	dec   *jsontext.Decoder
	// Children gather here and move to the arena together when their
	// container ends, so that siblings are adjacent.
	stack []rec
}

// offset returns the absolute offset the decoder has reached.
func (r *treeReader) offset() int32 { return int32(r.start + int(r.dec.InputOffset())) }

// next returns the absolute offset of the next token: the decoder's offset
// points just past the previous token, before any separator or space.
func (r *treeReader) next() int32 {
	off := int(r.offset())
	for off < len(r.t.src) {
		switch r.t.src[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return int32(off)
		}
	}
	return int32(off)
}

func (r *treeReader) value() (rec, error) {
	v := rec{off: r.next(), kind: r.dec.PeekKind()}
	if v.kind != '{' && v.kind != '[' {
		if _, err := r.dec.ReadValue(); err != nil {
			return rec{}, err
		}
		v.end = r.offset()
		return v, nil
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return rec{}, err
	}
	end := jsontext.Kind('}')
	if v.kind == '[' {
		end = ']'
	}
	base := len(r.stack)
	for r.dec.PeekKind() != end {
		var nameOff, name int32
		if v.kind == '{' {
			nameOff = r.next()
			if _, err := r.dec.ReadValue(); err != nil {
				return rec{}, err
			}
			name = r.offset()
		}
		child, err := r.value()
		if err != nil {
			return rec{}, err
		}
		child.nameOff, child.name = nameOff, name
		r.stack = append(r.stack, child)
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return rec{}, err
	}
	v.end = r.offset()
	v.first, v.count = int32(len(r.t.recs)), int32(len(r.stack)-base)
	r.t.recs = append(r.t.recs, r.stack[base:]...)
	r.stack = r.stack[:base]
	return v, nil
}

// unquote returns a string value's text, or the raw text of a number or a
// literal.
func unquote(raw []byte) string {
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
func intern(raw []byte) string {
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
		return &syntaxError{off: len(r.t.src), truncated: true, msg: "unexpected end of input: the JSON is truncated"}
	}
	return &syntaxError{off: off, msg: err.Error()}
}
