package verify_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/verify"
)

func ExampleCompile() {
	p, err := verify.Compile(`(and (map? data/result) (> (count (get data/result "items")) 0))`)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := p.Eval(context.Background(), verify.Bindings{
		Result: map[string]any{"items": []any{"apple", "pear"}},
	})
	fmt.Println(v.Passed, err)
	// Output: true <nil>
}

// A predicate returns true to pass, or a string saying what is wrong.
func ExamplePredicate_Eval() {
	p, err := verify.Compile(`(let [want (:min_items data/input)
      got  (count (:items data/result))]
  (if (>= got want)
    true
    (str "expected at least " want " items, got " got)))`)
	if err != nil {
		fmt.Println(err)
		return
	}
	input := map[string]any{"min_items": 2}
	for _, items := range [][]any{{"a", "b", "c"}, {"a"}} {
		v, err := p.Eval(context.Background(), verify.Bindings{
			Input:  input,
			Result: map[string]any{"items": items},
		})
		switch {
		case err != nil:
			fmt.Println("error:", err)
		case v.Passed:
			fmt.Println("passed")
		default:
			fmt.Println("failed:", v.Diagnosis)
		}
	}
	// Output:
	// passed
	// failed: expected at least 2 items, got 1
}

// A predicate that returns false fails with a diagnosis quoting it; one
// that returns anything but true, false or a string fails too, saying what
// it returned.
func ExamplePredicate_Eval_verdicts() {
	result := map[string]any{"tags": []any{"red", 7}}
	for _, src := range []string{
		`(every? string? (:tags data/result))`,
		`(count (:tags data/result))`,
		`(every? some? (:tags data/result))`,
	} {
		p, err := verify.Compile(src)
		if err != nil {
			fmt.Println(err)
			return
		}
		v, err := p.Eval(context.Background(), verify.Bindings{Result: result})
		fmt.Printf("%v %q %v\n", v.Passed, v.Diagnosis, err)
	}
	// Output:
	// false "predicate returned false: (every? string? (:tags data/result))" <nil>
	// false "predicate returned the number 2; a predicate must return true, false or a diagnosis string: (count (:tags data/result))" <nil>
	// true "" <nil>
}

// data/depends holds the outputs of the task's dependencies by task id: a
// predicate compares against them rather than hard-coding expectations.
func ExampleBindings() {
	p, err := verify.Compile(`(= (count (:rows data/result)) (get-in data/depends [:fetch :count]))`)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := p.Eval(context.Background(), verify.Bindings{
		Result:  map[string]any{"rows": []any{1, 2, 3}},
		Depends: map[string]any{"fetch": map[string]any{"count": 3}},
	})
	fmt.Println(v.Passed, err)
	// Output: true <nil>
}

// A predicate that does not compile says where, with a caret under the
// form at fault.
func ExampleCompileError() {
	_, err := verify.Compile(`(and (map? data/result)
     (> (cuont (:items data/result)) 0))`)
	fmt.Println(err)
	var ce *verify.CompileError
	if errors.As(err, &ce) {
		fmt.Println(ce.Pos.Line, ce.Pos.Column, ce.Msg)
	}
	// Output:
	// 2:10: unknown function cuont (did you mean count)
	//        (> (cuont (:items data/result)) 0))
	//            ^
	// 2 10 unknown function cuont (did you mean count)
}

// A predicate that cannot decide returns an error naming the form that
// failed, not a verdict.
func ExampleRuntimeError() {
	p, err := verify.Compile(`(> (:price data/result) 10)`)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := p.Eval(context.Background(), verify.Bindings{Result: map[string]any{"name": "lamp"}})
	fmt.Printf("%+v\n", v)
	fmt.Println(err)
	var re *verify.RuntimeError
	if errors.As(err, &re) {
		fmt.Println(re.Form, "at", re.Pos)
	}
	// Output:
	// {Passed:false Diagnosis:}
	// 1:1: (> (:price data/result) 10): cannot compare nil with the number 10
	// (> (:price data/result) 10) at 1:1
}

func ExampleCheck() {
	for _, src := range []string{
		`(map? data/result)`,
		`(count (:items data/result))`,
		`(when (empty? (:items data/result)) "no items")`,
		`(> (count data/result) 0`,
	} {
		fmt.Println(src)
		for _, d := range verify.Check(src) {
			fmt.Println("->", d)
		}
	}
	// Output:
	// (map? data/result)
	// (count (:items data/result))
	// -> 1:1: warning: never passes: the predicate always returns a number, but it must return true, false or a diagnosis string
	// (when (empty? (:items data/result)) "no items")
	// -> 1:1: warning: never passes: the predicate always returns nil or a string, never true; only true passes, e.g. (if ok true "diagnosis")
	// (> (count data/result) 0
	// -> 1:1: error: unclosed "(": expected ')' before the end of the predicate
}

func ExampleWithTimeout() {
	p, err := verify.Compile(`(every? (fn [a] (every? (fn [b] (every? (fn [c] (>= (+ a b c) 0)) data/result)) data/result)) data/result)`,
		verify.WithTimeout(10*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	big := make([]any, 10_000)
	for i := range big {
		big[i] = i
	}
	_, err = p.Eval(context.Background(), verify.Bindings{Result: big})
	fmt.Println(errors.Is(err, verify.ErrTimeout))
	// Output: true
}

// WithMaxSteps bounds an evaluation by the work it does rather than by the
// clock: the evaluation stops at the same form on every machine and every
// run, as a replayed workflow needs.
func ExampleWithMaxSteps() {
	p, err := verify.Compile(`(every? (fn [x] (> (count (sort data/result)) 0)) data/result)`,
		verify.WithTimeout(0), verify.WithMaxSteps(100_000))
	if err != nil {
		fmt.Println(err)
		return
	}
	big := make([]any, 10_000)
	for i := range big {
		big[i] = i
	}
	_, err = p.Eval(context.Background(), verify.Bindings{Result: big})
	fmt.Println(err)
	fmt.Println(errors.Is(err, verify.ErrStepLimit), errors.Is(err, verify.ErrTimeout))
	// Output:
	// 1:27: (sort data/result): predicate timed out: step budget exceeded
	// true true
}

// WithMaxNodes bounds the size of a predicate, so that a model cannot hand
// the engine a program too large to compile cheaply.
func ExampleWithMaxNodes() {
	_, err := verify.Compile(`(every? number? [1 2 3 4 5 6 7 8 9 10])`, verify.WithMaxNodes(8))
	fmt.Println(err)
	// Output:
	// 1:1: predicate too large: over 8 nodes
	//   (every? number? [1 2 3 4 5 6 7 8 9 10])
	//   ^
}

// WithMemoryBudget bounds what one evaluation may build; a predicate that
// builds more fails with a runtime error rather than a verdict.
func ExampleWithMemoryBudget() {
	p, err := verify.Compile(`(= (count (map (fn [x] [x x]) data/result)) 10000)`, verify.WithMemoryBudget(1000))
	if err != nil {
		fmt.Println(err)
		return
	}
	items := make([]any, 10_000)
	for i := range items {
		items[i] = i
	}
	_, err = p.Eval(context.Background(), verify.Bindings{Result: items})
	var re *verify.RuntimeError
	fmt.Println(errors.As(err, &re), err)
	// Output: true 1:24: [x x]: memory budget exceeded
}
