package verify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// stepBudgetCases are predicates that spend a step budget in different
// ways: sorting, a body per pair of elements, keyword lookups without a
// body, deep equality, regular expressions and string functions.
func stepBudgetCases() []struct {
	name, src string
	result    any
} {
	nums := make([]any, 20_000)
	maps := make([]any, 20_000)
	for i := range nums {
		nums[i] = float64(i)
		maps[i] = map[string]any{"a": float64(i)}
	}
	texts := make([]any, 1000)
	for i := range texts {
		texts[i] = strings.Repeat("abcdefghij", 1000) + fmt.Sprint(i)
	}
	return []struct {
		name, src string
		result    any
	}{
		{"sort", `(every? (fn [x] (> (count (sort data/result)) 0)) data/result)`, nums},
		{"pairs", `(every? (fn [a] (every? (fn [b] (>= (+ a b) 0)) data/result)) data/result)`, nums},
		{"keywords", `(every? (fn [x] (every? :a data/result)) data/result)`, maps},
		{"equality", `(every? (fn [x] (= data/result data/result)) data/result)`, maps},
		{"regex", `(every? (fn [x] (every? (fn [s] (not (re-find #"j[0-9]+k" s))) data/result)) data/result)`, texts},
		{"strings", `(every? (fn [x] (every? (fn [s] (not (includes? (upper-case s) "Z"))) data/result)) data/result)`, texts},
	}
}

// BenchmarkSteps measures how fast evaluations spend a step budget, in
// steps per second, for predicates that never finish within it: what a
// step budget is worth in time on this machine.
func BenchmarkSteps(b *testing.B) {
	const budget = 1_000_000
	for _, tc := range stepBudgetCases() {
		b.Run(tc.name, func(b *testing.B) {
			p, err := verify.Compile(tc.src, verify.WithTimeout(0), verify.WithMaxSteps(budget))
			if err != nil {
				b.Fatal(err)
			}
			bindings := verify.Bindings{Result: tc.result}
			for b.Loop() {
				if _, err := p.Eval(context.Background(), bindings); !errors.Is(err, verify.ErrStepLimit) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(budget)*float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
