package verify

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrTimeout is matched by the error of an evaluation that ran out of time.
var ErrTimeout = errors.New("predicate timed out")

// ErrStepLimit is matched by the error of an evaluation that spent its
// step budget ([WithMaxSteps]). It matches [ErrTimeout] as well: a step
// budget is a time bound counted in work rather than read from a clock.
var ErrStepLimit = fmt.Errorf("%w: step budget exceeded", ErrTimeout)

// Pos is a place in a predicate: 1-based line and column, the column
// counted in characters.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

func position(src string, off int) Pos {
	off = min(max(off, 0), len(src))
	line := strings.Count(src[:off], "\n") + 1
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	return Pos{Line: line, Column: utf8.RuneCountInString(src[lineStart:off]) + 1}
}

func lineCol(src string, off int) string { return position(src, off).String() }

// CompileError is a predicate that cannot be compiled: a syntax error, an
// unknown symbol or function, a wrong number of arguments. Its message
// carries the position and a caret under the offending form.
type CompileError struct {
	Pos Pos
	Msg string
	// Snippet is the source line at fault with a caret under [Pos].
	Snippet string
}

func newCompileError(src string, off int, msg string) *CompileError {
	return &CompileError{Pos: position(src, off), Msg: msg, Snippet: snippet(src, off)}
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s: %s\n%s", e.Pos, e.Msg, e.Snippet)
}

// snippet returns the line holding off and a caret under off, both indented.
func snippet(src string, off int) string {
	off = min(max(off, 0), len(src))
	start := strings.LastIndexByte(src[:off], '\n') + 1
	end := strings.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += off
	}
	line := strings.TrimRight(src[start:end], "\r")
	pad := strings.Map(func(r rune) rune {
		if r == '\t' {
			return '\t'
		}
		return ' '
	}, src[start:off])
	return "  " + line + "\n  " + pad + "^"
}

// RuntimeError is a predicate that failed while it ran: arithmetic or
// ordering with nil, a division by zero, an index out of range, a timeout.
// It is not a failed verdict: the predicate could not decide.
type RuntimeError struct {
	// Form is the source of the innermost form that failed, e.g. "(> n 0)".
	Form string
	Pos  Pos
	Err  error
}

func (e *RuntimeError) Error() string {
	if e.Form == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s: %s: %v", e.Pos, e.Form, e.Err)
}

func (e *RuntimeError) Unwrap() error { return e.Err }
