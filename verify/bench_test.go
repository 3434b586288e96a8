package verify_test

import (
	"context"
	"testing"

	"github.com/dagent-dev/dagent/verify"
	"github.com/expr-lang/expr"
)

// benchResult is a typical task output: a map with a list of items.
var benchResult = map[string]any{"items": []any{
	map[string]any{"name": "a", "price": 3.0},
	map[string]any{"name": "b", "price": 1.5},
}}

// BenchmarkEval compares a Lisp predicate with the same check written
// directly in expr syntax and compiled with expr, run on the same data.
func BenchmarkEval(b *testing.B) {
	b.Run("lisp", func(b *testing.B) {
		p, err := verify.Compile(`(and (map? data/result) (> (count (get data/result "items")) 0))`)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		bindings := verify.Bindings{Result: benchResult}
		b.ReportAllocs()
		for b.Loop() {
			v, err := p.Eval(ctx, bindings)
			if err != nil || !v.Passed {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("expr", func(b *testing.B) {
		env := map[string]any{"result": benchResult}
		program, err := expr.Compile(`type(result) == "map" && len(result.items) > 0`, expr.Env(env))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			out, err := expr.Run(program, env)
			if err != nil || out != true {
				b.Fatal(out, err)
			}
		}
	})
}

// BenchmarkCompile measures compiling predicates: the one of
// BenchmarkEval, and a longer one with a diagnosis.
func BenchmarkCompile(b *testing.B) {
	for _, tc := range []struct{ name, src string }{
		{"typical", `(and (map? data/result) (> (count (get data/result "items")) 0))`},
		{"diagnosis", `(if (>= (count (get data/result "items")) (count (get-in data/depends ["fetch" "items"])))
  true
  (str "expected at least " (count (get-in data/depends ["fetch" "items"])) " items, got " (count (get data/result "items"))))`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := verify.Compile(tc.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
