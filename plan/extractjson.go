package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// ErrNoJSON is the error of [ExtractJSON] when the text holds no JSON value
// it can take.
var ErrNoJSON = errors.New("no JSON value")

// ExtractJSON finds the JSON value in what a model wrote, with the
// scanner [Parse] reads plans with. In order, it takes:
//
//   - the whole text, when it is one JSON value of any kind;
//   - the content of the first Markdown code fence of JSON or of no
//     language that holds one JSON value;
//   - the first object in the text, wherever it is: a '{' followed by a
//     quoted name or '}', so that prose such as "{x}" or a template
//     "{{results.a}}" is passed over. Arrays and scalars are taken only
//     whole or fenced: in prose, "[1]" is rarely the answer.
//
// The value is returned as valid JSON: as written, or compacted when the
// model left trailing commas, which the scanner forgives and
// encoding/json does not. whole reports that the value was all the text
// said: the whole text, or a code fence that is the whole text. When
// there is no value, the error matches [ErrNoJSON] and, if a candidate
// was broken, says where, by line and column of text.
func ExtractJSON(text []byte) (value []byte, whole bool, err error) {
	if len(text) > maxSource {
		return nil, false, fmt.Errorf("%w: the text is over %d bytes", ErrNoJSON, maxSource)
	}
	s := newScanner(text)
	body := bytes.TrimLeft(text, " \t\r\n\ufeff")
	start := len(text) - len(body)
	var firstErr *syntaxError
	note := func(err error) {
		if se, ok := err.(*syntaxError); ok && firstErr == nil {
			firstErr = se
		}
	}
	n, end, err := s.read(start)
	switch {
	case err == nil && onlySpace(text[end:]):
		return strict(n), true, nil
	case err != nil && opensContainer(body):
		note(err)
	}
	for f := range jsonFences(text) {
		n, end, err := s.read(f.from)
		switch {
		case err != nil:
			note(err)
		case onlySpace(text[end:f.to]):
			return strict(n), f.open == start && onlySpace(text[f.to+3:]), nil
		}
	}
	for i := 0; i < len(text); {
		j := bytes.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		i += j
		if !opensObject(text[i+1:]) {
			i++
			continue
		}
		n, _, err := s.read(i)
		if err == nil {
			return strict(n), false, nil
		}
		note(err)
		se := err.(*syntaxError)
		if se.truncated {
			break
		}
		i = max(se.off, i+1)
	}
	if firstErr != nil {
		pos := (&source{data: text}).pos(firstErr.off)
		return nil, false, fmt.Errorf("%w: invalid JSON at line %d, column %d: %s", ErrNoJSON, pos.Line, pos.Column, firstErr.msg)
	}
	return nil, false, fmt.Errorf("%w in the text", ErrNoJSON)
}

// strict returns n's JSON as written when encoding/json accepts it, else
// compacted, which drops the trailing commas.
func strict(n node) []byte {
	raw := n.t.src[n.off:n.end]
	if json.Valid(raw) {
		return raw
	}
	return n.appendJSON(nil)
}

// opensContainer reports whether b starts like a JSON object or array of
// values rather than prose such as "[Note]".
func opensContainer(b []byte) bool {
	if len(b) == 0 || b[0] != '{' && b[0] != '[' {
		return false
	}
	rest := bytes.TrimLeft(b[1:], " \t\r\n")
	return len(rest) > 0 && bytes.IndexByte([]byte(`"{}[]`), rest[0]) >= 0
}

func onlySpace(b []byte) bool {
	return len(bytes.TrimLeft(b, " \t\r\n")) == 0
}

// fence is a Markdown code fence: where its opening "```" is, and its
// content, text[from:to], which the closing "```" follows.
type fence struct{ open, from, to int }

// jsonFences yields each Markdown code fence of JSON or of no language.
func jsonFences(text []byte) iter.Seq[fence] {
	return func(yield func(fence) bool) {
		for i := 0; ; {
			j := bytes.Index(text[i:], []byte("```"))
			if j < 0 {
				return
			}
			open := fenceOpen(text[i+j:])
			if open == 0 {
				return
			}
			from := i + j + open
			k := bytes.Index(text[from:], []byte("```"))
			if k < 0 {
				return
			}
			to := from + k
			if lang := bytes.TrimSpace(text[i+j+3 : from]); len(lang) == 0 || bytes.EqualFold(lang, []byte("json")) {
				if !yield(fence{i + j, from, to}) {
					return
				}
			}
			i = to + 3
		}
	}
}

// fenceOpen is the length of the opening fence at the start of b, up to
// and with its newline, or 0 when b does not start with a whole opening
// line.
func fenceOpen(b []byte) int {
	if !bytes.HasPrefix(b, []byte("```")) {
		return 0
	}
	eol := bytes.IndexByte(b, '\n')
	if eol < 0 {
		return 0
	}
	return eol + 1
}
