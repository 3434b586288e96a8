package verify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/verify"
)

// fuzzBindings are the data each input that compiles is evaluated on:
// nothing, typical JSON, and odd Go values.
var fuzzBindings = []verify.Bindings{
	{},
	{
		Input: map[string]any{"n": 3.0, "name": "widget", "ids": []any{1.0, 2.0, 3.0}, "min_items": 1.0},
		Result: map[string]any{
			"name": "Ann", "ok": true, "nothing": nil, "ratio": 0.5, "text": "Hello, World",
			"items": []any{map[string]any{"id": 1.0, "price": 3.0, "tags": []any{"a", "b"}}, map[string]any{"id": 2.0, "tags": []any{}}},
		},
		Depends: map[string]any{"fetch": map[string]any{"count": 2.0, "items": []any{1.0, 2.0}}, "parse": "done"},
	},
	{
		Input: "a string",
		Result: []any{1, "a", nil, true, []any{}, map[string]any{}, json.Number("7"), json.Number("1e400"),
			int64(math.MinInt64), math.MaxFloat64, math.Inf(-1), math.NaN(), math.Copysign(0, -1), uint8(3), []string{"x"}},
		Depends: map[string]any{"t": struct {
			Tags []string
			N    uint8
			M    map[string]int
		}{[]string{"x"}, 3, map[string]int{"k": 1}}},
	},
}

// within runs f and fails the test if f panics or has not returned after d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
				return
			}
			done <- nil
		}()
		f()
	}()
	select {
	case r := <-done:
		if r != nil {
			t.Fatalf("%s: %v", what, r)
		}
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
}

// internalFailure reports whether a runtime error is a bug rather than the
// predicate's: a Go panic in a function, or expr meeting a value of a type
// the compiler should not have let through.
func internalFailure(err error) bool {
	var goErr runtime.Error
	if errors.As(err, &goErr) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"invalid operation", "interface conversion", "cannot fetch", "reflect", "nil pointer", "non-bool", "unknown"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// FuzzCompile: Compile never panics nor hangs, and fails only with a
// *CompileError; what compiles evaluates, without panicking, to a verdict
// or a *RuntimeError that names a form of the predicate.
func FuzzCompile(f *testing.F) {
	f.Add(`(and (map? data/result) (> (count (get data/result "items")) 0))`)
	f.Fuzz(func(t *testing.T, src string) {
		var (
			p   *verify.Predicate
			err error
		)
		within(t, fuzzLimit, "Compile", func() { p, err = verify.Compile(src, verify.WithTimeout(50*time.Millisecond)) })
		var diags []verify.Diagnostic
		within(t, fuzzLimit, "Check", func() { diags = verify.Check(src) })
		if err != nil {
			var ce *verify.CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q): %T is not a *CompileError: %v", src, err, err)
			}
			if ce.Pos.Line < 1 || ce.Pos.Column < 1 || ce.Pos.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("Compile(%q): position %v out of the predicate", src, ce.Pos)
			}
			if ce.Msg == "" || !strings.HasSuffix(ce.Snippet, "^") || !strings.HasPrefix(err.Error(), ce.Pos.String()+": ") {
				t.Fatalf("Compile(%q): malformed error %q", src, err)
			}
			if len(diags) != 1 || diags[0].Severity != verify.SeverityError || diags[0].Pos != ce.Pos || diags[0].Message != ce.Msg {
				t.Fatalf("Check(%q) = %v, want the compile error %v", src, diags, err)
			}
			return
		}
		for _, d := range diags {
			if d.Severity != verify.SeverityWarning {
				t.Fatalf("Check(%q) = %v for a predicate that compiles", src, diags)
			}
		}
		for i, b := range fuzzBindings {
			var (
				v    verify.Verdict
				err  error
				what = fmt.Sprintf("Eval(%q) on bindings %d", src, i)
			)
			within(t, fuzzLimit, what, func() { v, err = p.Eval(context.Background(), b) })
			if err != nil {
				var re *verify.RuntimeError
				if !errors.As(err, &re) {
					t.Fatalf("%s: %T is not a *RuntimeError: %v", what, err, err)
				}
				if internalFailure(re.Err) {
					t.Fatalf("%s: internal failure: %v", what, err)
				}
				if re.Form != "" && !strings.Contains(src, re.Form) {
					t.Fatalf("%s: the error names %q, which is not in the predicate", what, re.Form)
				}
				if v != (verify.Verdict{}) {
					t.Fatalf("%s: a verdict %+v with the error %v", what, v, err)
				}
				continue
			}
			if v.Passed != (v.Diagnosis == "") {
				t.Fatalf("%s: inconsistent verdict %+v", what, v)
			}
			var again verify.Verdict
			within(t, fuzzLimit, what, func() { again, err = p.Eval(context.Background(), b) })
			if err == nil && again != v {
				t.Fatalf("%s: not deterministic: %+v, then %+v", what, v, again)
			}
		}
	})
}

// fuzzLimit is how long one call may take before the fuzz target calls it
// a hang.
var fuzzLimit = 10 * time.Second
