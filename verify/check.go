package verify

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/dagent-dev/dagent/internal/edit"
)

// Severity says how bad a diagnostic is.
type Severity string

// Severities of diagnostics.
const (
	// SeverityError: the predicate does not compile.
	SeverityError Severity = "error"
	// SeverityWarning: the predicate compiles but can never pass.
	SeverityWarning Severity = "warning"
)

// Diagnostic is one finding of [Check].
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Pos      Pos      `json:"pos"`
	Message  string   `json:"message"`
}

func (d Diagnostic) String() string { return fmt.Sprintf("%s: %s: %s", d.Pos, d.Severity, d.Message) }

// Check compiles src and reports what is wrong with it without running it:
// the compile error, or warnings for a predicate that can never pass — one
// that is the literal false, or whose value can never be a boolean: only
// true passes, so a predicate that returns a number, a collection, nil or
// only diagnosis strings always fails.
func Check(src string) []Diagnostic {
	p, err := Compile(src)
	return diagnose(p, err)
}

// diagnose is Check's verdict on a compilation: its error, or what the
// compiled predicate can return.
func diagnose(p *Predicate, err error) []Diagnostic {
	if err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			return []Diagnostic{{Severity: SeverityError, Pos: ce.Pos, Message: ce.Msg}}
		}
		return []Diagnostic{{Severity: SeverityError, Pos: Pos{Line: 1, Column: 1}, Message: err.Error()}}
	}
	start := Pos{Line: 1, Column: 1}
	if len(p.spans) > 0 {
		top := p.spans[len(p.spans)-1].form
		start = position(p.src, top.pos)
		if top.kind == kBool && !top.b {
			return []Diagnostic{{Severity: SeverityWarning, Pos: start, Message: "never passes: the predicate is the constant false"}}
		}
	}
	switch {
	case p.typ&(tBool|tStr) == 0:
		return []Diagnostic{{Severity: SeverityWarning, Pos: start, Message: fmt.Sprintf(
			"never passes: the predicate always returns %s, but it must return true, false or a diagnosis string", p.typ)}}
	case p.typ&tBool == 0:
		// Only true passes: (when bad "diagnosis") fails even when all is
		// well, with nil.
		return []Diagnostic{{Severity: SeverityWarning, Pos: start, Message: fmt.Sprintf(
			"never passes: the predicate always returns %s, never true; only true passes, e.g. (if ok true \"diagnosis\")", p.typ)}}
	}
	return nil
}

// String names the kinds of values a vtype holds, for messages.
func (t vtype) String() string {
	names := []struct {
		t    vtype
		name string
	}{{tNil, "nil"}, {tBool, "a boolean"}, {tNum, "a number"}, {tStr, "a string"}, {tKw, "a keyword"}, {tVec, "a vector"}, {tMap, "a map"}}
	var out []string
	for _, n := range names {
		if t&n.t != 0 {
			out = append(out, n.name)
		}
	}
	switch len(out) {
	case 0:
		return "nothing"
	case 1:
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

// suggestSymbol guesses what an unknown symbol meant.
func suggestSymbol(name string) string {
	if strings.HasPrefix(name, "data") || slices.Contains([]string{"input", "result", "depends", "results"}, name) {
		return "; the data is data/input, data/result and data/depends"
	}
	return ""
}

// suggestFunction names the builtin closest to an unknown function name.
func suggestFunction(name string) string {
	best, ok := edit.Closest(name, functionNames())
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s)", best)
}

// functionNames are the names of the builtins and special forms, sorted,
// so that of equally near names the first in alphabetical order is
// suggested.
var functionNames = sync.OnceValue(func() []string {
	names := slices.Collect(maps.Keys(builtins))
	for f := range specialForms {
		names = append(names, f)
	}
	slices.Sort(names)
	return names
})
