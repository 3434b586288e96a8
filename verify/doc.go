// Package verify is dagent's predicate language: a small Clojure-like Lisp
// in which a task's verification says whether the task's output is good.
//
// [Compile] reads a predicate once and compiles it into an expr program
// (github.com/expr-lang/expr); [Predicate.Eval] runs it after every attempt of
// the task with the bindings data/input, data/result and data/depends. A
// predicate returns true to pass, a string to fail with that diagnosis, or
// false to fail. Compile catches what can be caught before running — syntax,
// unknown symbols and functions, arity — with line, column and a caret;
// [Check] adds warnings for predicates that can never pass.
//
// The language follows Clojure where that is safe: only nil and false are
// falsy, a missing key is nil, (count nil) is 0. It departs from Clojure in
// one place on purpose: and, or and not return booleans. See
// docs/predicates.md for the reference.
//
// An evaluation is bounded: by the wall clock ([WithTimeout]), by the
// memory it allocates ([WithMemoryBudget]) and, when asked, by the work it
// does, counted in steps ([WithMaxSteps]). Code that must reach the same
// verdict wherever and whenever it runs — a replayed workflow — turns the
// clock off and bounds steps instead: the count, unlike the clock, stops
// an evaluation at the same form every time.
package verify
