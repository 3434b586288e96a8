package verify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/verify"
)

// fixtureJSON is the data most cases judge, decoded as encoding/json
// decodes it by default: every number a float64.
const fixtureJSON = `{
  "input": {"name": "widget", "n": 3, "ids": [1, 2, 3], "limit": 2.5, "query": "Find THE widget"},
  "result": {
    "name": "Ann", "count": 2, "ok": true, "nothing": null, "ratio": 0.5, "text": "Hello, World",
    "items": [{"id": 1, "price": 3.0, "tags": ["a", "b"]}, {"id": 2, "price": 1.5, "tags": []}],
    "nested": {"a": {"b": "deep"}}, "empty": {}, "list": []
  },
  "depends": {"fetch": {"count": 2, "items": [1, 2]}, "parse": "done"}
}`

func fixture(t testing.TB) verify.Bindings {
	t.Helper()
	var data struct {
		Input   any            `json:"input"`
		Result  any            `json:"result"`
		Depends map[string]any `json:"depends"`
	}
	require.NoError(t, json.Unmarshal([]byte(fixtureJSON), &data))
	return verify.Bindings{Input: data.Input, Result: data.Result, Depends: data.Depends}
}

// outcome is what evaluating a predicate should give: a pass, a failed
// verdict with a diagnosis, or a runtime error naming a form.
type outcome struct {
	pass     bool
	diag     string // the diagnosis, exactly
	returned string // or: the predicate returned this non-verdict value
	err      string // or: the runtime error's message, exactly
	form     string // and the form it names
}

var passes = outcome{pass: true}

func fails(diagnosis string) outcome { return outcome{diag: diagnosis} }

// returns is a failed verdict because the predicate returned something
// that is not a verdict, described as in the diagnosis.
func returns(what string) outcome { return outcome{returned: what} }

// isFalse is a failed verdict because the predicate returned false.
var isFalse = outcome{returned: "false"}

func errs(form, msg string) outcome { return outcome{err: msg, form: form} }

type evalCase struct {
	src  string
	want outcome
	b    *verify.Bindings // default: fixture
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			p, err := verify.Compile(tc.src)
			require.NoError(t, err)
			b := fixture(t)
			if tc.b != nil {
				b = *tc.b
			}
			v, err := p.Eval(context.Background(), b)
			checkOutcome(t, tc.src, tc.want, v, err)
		})
	}
}

func checkOutcome(t *testing.T, src string, want outcome, v verify.Verdict, err error) {
	t.Helper()
	if want.err != "" {
		var re *verify.RuntimeError
		require.ErrorAs(t, err, &re, "verdict %+v", v)
		assert.Equal(t, want.err, re.Err.Error())
		assert.Equal(t, want.form, re.Form)
		assert.Equal(t, verify.Verdict{}, v)
		return
	}
	require.NoError(t, err)
	switch {
	case want.pass:
		assert.Equal(t, verify.Verdict{Passed: true}, v)
	case want.returned == "false":
		assert.Equal(t, verify.Verdict{Diagnosis: "predicate returned false: " + src}, v)
	case want.returned != "":
		assert.Equal(t, verify.Verdict{Diagnosis: "predicate returned " + want.returned +
			"; a predicate must return true, false or a diagnosis string: " + src}, v)
	default:
		assert.Equal(t, verify.Verdict{Diagnosis: want.diag}, v)
	}
}

func TestReader(t *testing.T) {
	runEvalCases(t, []evalCase{
		{src: `(vector? [1 "two" :three nil true 4.5 [] {}])`, want: passes},
		{src: `(= [1 2 3] [1 2 3])`, want: passes},
		{src: `(= [1, 2,3] [1 2 3])`, want: passes}, // commas are whitespace
		{src: `(= () [])`, want: passes},            // the empty list is a value
		{src: `(= {:a 1 "b" [2 3]} {"a" 1 :b [2 3]})`, want: passes},
		{src: `(map? {})`, want: passes},
		{src: `(= (count "a\"b\\c\nd\te\u00e9") 10)`, want: passes},
		{src: `(= "\u0041\r\b\f" (str "A" "\r" "\b" "\f"))`, want: passes},
		{src: `(= (+ -3 -2.5) -5.5)`, want: passes},
		{src: `(= +7 7)`, want: passes},
		{src: `(and (= 1e3 1000) (= 2.5e-1 0.25) (= 1. 1))`, want: passes},
		{src: `(and (keyword? :items) (= :items :items) (not= :items :other))`, want: passes},
		{src: `(and (nil? nil) (boolean? true) (boolean? false) (not false))`, want: passes},
		{src: "; a comment first\n(= 1 ; one\n   1) ; and a last one", want: passes},
		{src: "(=\r\n 1\t1)", want: passes},
		{src: `(= (re-find #"\d+\.\d+" "version 1.25") "1.25")`, want: passes},            // regex text is raw
		{src: `(= (re-find #"say \"hi\"" "they say \"hi\"") "say \"hi\"")`, want: passes}, // \" in a regex is a quote
		{src: `(and (= (get data/input "name") "widget") (map? data/result) (map? data/depends))`, want: passes},
		{src: `(= (get-in data/depends ["fetch" "count"]) 2)`, want: passes},
		{src: `(and (nil? data/input) (nil? data/result) (nil? data/depends))`, want: passes, b: &verify.Bindings{}},
		{src: `(= -9223372036854775808 (- -9223372036854775807 1))`, want: passes},
		{src: `(= 9223372036854775807 (+ 9223372036854775806 1))`, want: passes},
	})
}

func TestSpecialForms(t *testing.T) {
	runEvalCases(t, []evalCase{
		// if: only nil and false are falsy.
		{src: `(if (> (count (:items data/result)) 1) true "too few items")`, want: passes},
		{src: `(if (:nothing data/result) true "nothing is nil")`, want: fails("nothing is nil")},
		{src: `(if false true "false is falsy")`, want: fails("false is falsy")},
		{src: `(if 0 true "0 is falsy")`, want: passes},
		{src: `(if "" true "the empty string is falsy")`, want: passes},
		{src: `(if [] true "the empty vector is falsy")`, want: passes},
		{src: `(if false "then")`, want: returns("nil")},
		// when: a body whose last form is the value, nil when the test fails.
		{src: `(when (= 1 1) "checked" true)`, want: passes},
		{src: `(when false true)`, want: returns("nil")},
		// cond
		{src: `(cond (< (:count data/result) 1) "none" (< (:count data/result) 5) true :else "too many")`, want: passes},
		{src: `(cond false "a" nil "b" :else "fallback")`, want: fails("fallback")},
		{src: `(cond false "a" nil "b")`, want: returns("nil")},
		{src: `(cond (= 1 2) "a" true "true works as :else")`, want: fails("true works as :else")},
		{src: `(cond)`, want: returns("nil")},
		// let
		{src: `(let [items (:items data/result) n (count items)] (= n 2))`, want: passes},
		{src: `(let [x 1] (let [x (+ x 1)] (= x 2)))`, want: passes},
		{src: `(let [x 1 x (* x 10)] (= x 10))`, want: passes},
		{src: `(let [x 1] (and (let [x 2] (= x 2)) (= x 1)))`, want: passes},
		{src: `(let [x 1] (= x 2) (= x 1))`, want: passes}, // the last form is the value
		{src: `(let [count 3] (= count 3))`, want: passes}, // a name may shadow a function
		// and, or, not: Clojure's truth, but booleans out.
		{src: `(and (map? data/result) (get data/result "name"))`, want: passes},
		{src: `(= (and 1 "x") true)`, want: passes},
		{src: `(= (or nil "x") true)`, want: passes},
		{src: `(= (or nil false) false)`, want: passes},
		{src: `(and)`, want: passes},
		{src: `(or)`, want: isFalse},
		{src: `(not (:nothing data/result))`, want: passes},
		{src: `(= (not 0) false)`, want: passes},
		{src: `(or (map? data/result) (+ 1 nil))`, want: passes}, // short-circuit
		{src: `(and false (+ 1 nil))`, want: isFalse},
		// fn and #( ), do
		{src: `(every? (fn [item] (> (:price item) 0)) (:items data/result))`, want: passes},
		{src: `(every? #(number? (:id %)) (:items data/result))`, want: passes},
		{src: `(every? #(> %1 0) [1 2])`, want: passes},
		{src: `(every? (fn [x] (let [y (* x 2)] (> y x))) [1 2 3])`, want: passes},
		{src: `(every? (fn [i] (some #(= i %) (get-in data/depends ["fetch" "items"]))) [1 2])`, want: passes},
		{src: `(every? #(every? (fn [t] (string? t)) (:tags %)) (:items data/result))`, want: passes},
		{src: `(every? (fn [x] (count x) (> x 0)) [1 2])`, want: passes}, // a body of several forms
		{src: `(do (+ 1 2) true)`, want: passes},
		// -> and ->>
		{src: `(-> data/result :nested :a :b (= "deep"))`, want: passes},
		{src: `(-> data/result :items count (= 2))`, want: passes},
		{src: `(-> data/result (get "name") lower-case (= "ann"))`, want: passes},
		{src: `(->> data/result :items (map :price) sum (= 4.5))`, want: passes},
		{src: `(->> data/input :ids (filter #(> % 1)) (= [2 3]))`, want: passes},
		{src: `(-> 5 (- 2) (= 3))`, want: passes},
		{src: `(->> 5 (- 2) (= -3))`, want: passes},
		{src: `(-> data/result)`, want: returns("a map of 10")},
	})
}

func TestFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		// = not= < > <= >=
		{src: `(= 1 1.0)`, want: passes},
		{src: `(= 1 1 1.0)`, want: passes},
		{src: `(= 1 1 2)`, want: isFalse},
		// Integers compare exactly, also past 2^53 and past 64 bits.
		{src: `(let [a 9007199254740993 b 9007199254740992] (and (not= a b) (> a b)))`, want: passes},
		{src: `(= 99999999999999999999 1e20)`, want: isFalse},
		{src: `(= 100000000000000000000 1e20)`, want: passes},
		{src: `(= 1)`, want: passes},
		{src: `(= :k "k")`, want: isFalse},
		{src: `(and (= "a" "a") (= nil nil) (= true true) (not= nil false))`, want: passes},
		{src: `(= [1 [2 {:a 3}]] [1.0 [2 {"a" 3.0}]])`, want: passes},
		{src: `(not= [1 2] [1 2 3])`, want: passes},
		{src: `(not= {:a 1} {:a 1 :b 2})`, want: passes},
		{src: `(not= 1 2)`, want: passes},
		{src: `(not= 1 1.0)`, want: isFalse},
		{src: `(= (:count data/result) 2 (count (:items data/result)))`, want: passes},
		{src: `(< 1 1.5 2)`, want: passes},
		{src: `(< 1 3 2)`, want: isFalse},
		{src: `(> 3 2 1)`, want: passes},
		{src: `(<= 1 1 2)`, want: passes},
		{src: `(>= 2 2.0 1)`, want: passes},
		{src: `(< "apple" "banana")`, want: passes},
		{src: `(< nil 1)`, want: errs(`(< nil 1)`, "cannot compare nil with the number 1")},
		{src: `(> (:missing data/result) 0)`, want: errs(`(> (:missing data/result) 0)`, "cannot compare nil with the number 0")},
		{src: `(< 1 "a")`, want: errs(`(< 1 "a")`, `cannot compare the number 1 with the string "a"`)},
		{src: `(< :a)`, want: passes},
		{src: `(nil? (nth nil 0))`, want: passes},

		// + - * / mod abs round min max
		{src: `(= (+ 1 2 3) 6)`, want: passes},
		{src: `(and (= (+) 0) (= (*) 1))`, want: passes},
		{src: `(= (+ 1 2.5) 3.5)`, want: passes},
		{src: `(int? (+ 1 2))`, want: passes},
		{src: `(= (+ 9223372036854775807 1) 9223372036854775808.0)`, want: passes}, // overflow goes to float
		{src: `(= (- 10 3 2) 5)`, want: passes},
		{src: `(= (- 5) -5)`, want: passes},
		{src: `(= (* 2 3 4) 24)`, want: passes},
		{src: `(= (/ 6 3) 2)`, want: passes},
		{src: `(= (/ 1 2) 0.5)`, want: passes},
		{src: `(= (/ 4) 0.25)`, want: passes},
		{src: `(/ 1 0)`, want: errs(`(/ 1 0)`, "division by zero")},
		{src: `(/ 1.5 0.0)`, want: errs(`(/ 1.5 0.0)`, "division by zero")},
		{src: `(= (mod 7 3) 1)`, want: passes},
		{src: `(= (mod -7 3) 2)`, want: passes},
		{src: `(= (mod 7 -3) -2)`, want: passes},
		{src: `(= (mod -7 -3) -1)`, want: passes},
		{src: `(= (mod -7.5 2) 0.5)`, want: passes},
		{src: `(mod 1 0)`, want: errs(`(mod 1 0)`, "division by zero")},
		{src: `(and (= (abs -3) 3) (= (abs -2.5) 2.5) (= (abs 4) 4))`, want: passes},
		{src: `(and (= (round 2.5) 3) (= (round -2.5) -3) (= (round 2.4) 2) (int? (round 2.6)))`, want: passes},
		{src: `(= (round 1e300) 1e300)`, want: passes},
		{src: `(= (min 3 1.5 2) 1.5)`, want: passes},
		{src: `(= (max 1 5 3) 5)`, want: passes},
		{src: `(> (max (:count data/result) 1) 1)`, want: passes},
		{src: `(min 1 nil)`, want: errs(`(min 1 nil)`, "cannot compare nil")},
		{src: `(+ 1 nil)`, want: errs(`(+ 1 nil)`, "+: cannot do arithmetic with nil")},
		{src: `(* 2 "3")`, want: errs(`(* 2 "3")`, `*: cannot do arithmetic with the string "3"`)},
		{src: `(- (:missing data/result))`, want: errs(`(- (:missing data/result))`, "-: cannot do arithmetic with nil")},
		{src: `(abs nil)`, want: errs(`(abs nil)`, "abs: cannot do arithmetic with nil")},
		{src: `(round "1.5")`, want: errs(`(round "1.5")`, `cannot round the string "1.5"`)},

		// count empty? not-empty
		{src: `(= (count (:items data/result)) 2)`, want: passes},
		{src: `(= (count nil) 0)`, want: passes},
		{src: `(= (count "héllo") 5)`, want: passes},
		{src: `(= (count {:a 1 :b 2}) 2)`, want: passes},
		{src: `(count 5)`, want: errs(`(count 5)`, "cannot count the number 5")},
		{src: `(and (empty? []) (empty? nil) (empty? "") (empty? {}) (empty? (:list data/result)))`, want: passes},
		{src: `(not (empty? [nil]))`, want: passes},
		{src: `(empty? :k)`, want: errs(`(empty? :k)`, "cannot count the keyword :k")},
		{src: `(= (not-empty [1]) [1])`, want: passes},
		{src: `(and (nil? (not-empty [])) (nil? (not-empty "")) (nil? (not-empty nil)))`, want: passes},
		{src: `(not-empty "diagnosis")`, want: fails("diagnosis")},

		// get, keywords as functions
		{src: `(= (get data/result :name) "Ann")`, want: passes},
		{src: `(= (get {:a 1} "a") 1)`, want: passes},
		{src: `(nil? (get data/result "missing"))`, want: passes},
		{src: `(= (get data/result "missing" "default") "default")`, want: passes},
		{src: `(nil? (get data/result "nothing" "default"))`, want: passes}, // present, with nil
		{src: `(and (nil? (get nil "a")) (nil? (get nil "a")) (= (get nil "a" 5) 5))`, want: passes},
		{src: `(nil? (get "a string" "k"))`, want: passes},
		{src: `(nil? (get 42 :k))`, want: passes},
		{src: `(and (= (get [10 20] 1) 20) (nil? (get [10 20] 5)) (nil? (get [10 20] -1)) (= (get [10 20] 9 :d) :d))`, want: passes},
		{src: `(= (get "abc" 1) "b")`, want: passes},
		{src: `(= (:name data/result) "Ann")`, want: passes},
		{src: `(= (:missing data/result "default") "default")`, want: passes},
		{src: `(and (nil? (:a nil)) (nil? (:a "str")) (nil? (:a [1])))`, want: passes},
		{src: `(:name data/result)`, want: fails("Ann")},

		// get-in
		{src: `(= (get-in data/result [:nested :a :b]) "deep")`, want: passes},
		{src: `(= (get-in data/result ["nested" :a "b"]) "deep")`, want: passes},
		{src: `(= (get-in data/result [:items 1 :tags]) [])`, want: passes},
		{src: `(nil? (get-in data/result [:nested :x :b]))`, want: passes},
		{src: `(= (get-in data/result [:nested :x] "none") "none")`, want: passes},
		{src: `(= (get-in data/result [:name :first] "none") "none")`, want: passes}, // through a string
		{src: `(nil? (get-in nil [:a :b]))`, want: passes},
		{src: `(= (get-in data/result []) data/result)`, want: passes},
		{src: `(get-in data/result "nested")`, want: errs(`(get-in data/result "nested")`, `get-in needs a vector of keys, found the string "nested"`)},

		// keys vals contains?
		{src: `(= (keys {:b 1 :a 2}) ["a" "b"])`, want: passes},
		{src: `(= (vals {:b 1 :a 2}) [2 1])`, want: passes},
		{src: `(and (nil? (keys {})) (nil? (keys nil)) (nil? (vals {})))`, want: passes},
		{src: `(= (keys data/depends) ["fetch" "parse"])`, want: passes},
		{src: `(keys [1])`, want: errs(`(keys [1])`, "keys needs a map, found a vector of 1")},
		{src: `(and (contains? data/result :name) (contains? data/result "nothing") (not (contains? data/result "missing")))`, want: passes},
		{src: `(and (contains? [5 6] 1) (not (contains? [5 6] 5)))`, want: passes}, // indexes, not values
		{src: `(and (contains? "abc" 2) (not (contains? nil "a")))`, want: passes},
		{src: `(contains? 5 1)`, want: errs(`(contains? 5 1)`, "contains? needs a map, a vector or a string, found the number 5")},

		// first last nth rest
		{src: `(and (= (first [1 2 3]) 1) (nil? (first [])) (nil? (first nil)) (= (first "abc") "a"))`, want: passes},
		{src: `(= (first {:b 1 :a 2}) ["a" 2])`, want: passes},
		{src: `(first 5)`, want: errs(`(first 5)`, "first needs a vector, found the number 5")},
		{src: `(and (= (last [1 2 3]) 3) (nil? (last [])) (nil? (last nil)) (= (last "abc") "c"))`, want: passes},
		{src: `(= (nth [1 2 3] 1) 2)`, want: passes},
		{src: `(= (nth [1 2] 5 :none) :none)`, want: passes},
		{src: `(= (nth nil 0 :none) :none)`, want: passes},
		{src: `(= (nth [10 20 30] (- (:n data/input) 1)) 30)`, want: passes}, // a JSON number as index
		{src: `(nth [1 2] 5)`, want: errs(`(nth [1 2] 5)`, "index 5 out of range for a vector of 2")},
		{src: `(nth [1 2] -1)`, want: errs(`(nth [1 2] -1)`, "index -1 out of range for a vector of 2")},
		{src: `(nth [1 2] "a")`, want: errs(`(nth [1 2] "a")`, `nth needs an integer index, found the string "a"`)},
		{src: `(nth [1 2] 0.5)`, want: errs(`(nth [1 2] 0.5)`, `nth needs an integer index, found the number 0.5`)},
		{src: `(and (= (rest [1 2 3]) [2 3]) (= (rest []) []) (= (rest nil) []) (= (rest "ab") ["b"]))`, want: passes},

		// type predicates
		{src: `(and (map? {}) (map? data/result) (not (map? [])) (not (map? nil)))`, want: passes},
		{src: `(and (vector? []) (vector? (:items data/result)) (not (vector? nil)) (not (vector? "ab")))`, want: passes},
		{src: `(and (sequential? [1]) (not (sequential? {})))`, want: passes},
		{src: `(and (string? "s") (not (string? :s)) (not (string? nil)))`, want: passes},
		{src: `(and (number? 1.5) (number? 1) (number? (:count data/result)) (not (number? "1")))`, want: passes},
		{src: `(and (int? 2) (int? 2.0) (int? (:count data/result)) (not (int? 2.5)) (not (int? "2")))`, want: passes},
		{src: `(and (boolean? false) (boolean? (:ok data/result)) (not (boolean? nil)) (not (boolean? "true")))`, want: passes},
		{src: `(and (nil? nil) (nil? (:nothing data/result)) (not (nil? false)))`, want: passes},
		{src: `(and (some? false) (some? 0) (not (some? nil)))`, want: passes},
		{src: `(and (keyword? :a) (not (keyword? "a")))`, want: passes},

		// str subs includes? starts-with? ends-with? lower-case upper-case
		{src: `(= (str "a" 1 2.5 nil :k true) "a12.5:ktrue")`, want: passes},
		{src: `(and (= (str nil) "") (= (str) ""))`, want: passes},
		{src: `(= (str [1 "a" nil] {:b 2 :a [:x]}) "[1 \"a\" nil]{\"a\" [:x], \"b\" 2}")`, want: passes},
		{src: `(str "expected 3 items, got " (count (:items data/result)))`, want: fails("expected 3 items, got 2")},
		{src: `(and (= (subs "hello" 1 3) "el") (= (subs "hello" 2) "llo") (= (subs "héllo" 1 2) "é") (= (subs "abc" 3) ""))`, want: passes},
		{src: `(subs "hello" 3 10)`, want: errs(`(subs "hello" 3 10)`, "subs: range 3..10 out of bounds for a string of 5 characters")},
		{src: `(subs "hello" 3 1)`, want: errs(`(subs "hello" 3 1)`, "subs: range 3..1 out of bounds for a string of 5 characters")},
		{src: `(subs "hello" -1)`, want: errs(`(subs "hello" -1)`, "subs: range -1..5 out of bounds for a string of 5 characters")},
		{src: `(subs nil 1)`, want: errs(`(subs nil 1)`, "subs needs a string, found nil")},
		{src: `(subs "abc" "1")`, want: errs(`(subs "abc" "1")`, "subs needs integer indexes")},
		{src: `(and (includes? (:text data/result) "World") (not (includes? "abc" "d")) (includes? "abc" ""))`, want: passes},
		{src: `(includes? nil "a")`, want: errs(`(includes? nil "a")`, `includes? needs two strings, found nil and the string "a"`)},
		{src: `(and (starts-with? "hello" "he") (not (starts-with? "hello" "lo")))`, want: passes},
		{src: `(and (ends-with? "hello" "lo") (not (ends-with? "hello" "he")))`, want: passes},
		{src: `(starts-with? :hello "he")`, want: errs(`(starts-with? :hello "he")`, `starts-with? needs two strings, found the keyword :hello and the string "he"`)},
		{src: `(= (lower-case (:query data/input)) "find the widget")`, want: passes},
		{src: `(= (upper-case "abc") "ABC")`, want: passes},
		{src: `(upper-case nil)`, want: errs(`(upper-case nil)`, "upper-case needs a string, found nil")},

		// re-find (RE2)
		{src: `(= (re-find #"\d+" "order 66 shipped") "66")`, want: passes},
		{src: `(= (re-find #"(\w+)@(\w+)\.com" "mail bob@example.com now") ["bob@example.com" "bob" "example"])`, want: passes},
		{src: `(= (re-find #"a(x)?b" "ab") ["ab" nil])`, want: passes},
		{src: `(nil? (re-find #"\d" "none"))`, want: passes},
		{src: `(= (re-find "^[A-Z]" "Hello") "H")`, want: passes}, // a pattern in a string
		{src: `(= (re-find #"(?i)world" (:text data/result)) "World")`, want: passes},
		{src: `(re-find "(" "x")`, want: errs(`(re-find "(" "x")`, "re-find: invalid pattern: error parsing regexp: missing closing ): `(`")},
		{src: `(re-find #"a" nil)`, want: errs(`(re-find #"a" nil)`, "re-find needs a string, found nil")},
		{src: `(re-find 5 "a")`, want: errs(`(re-find 5 "a")`, "re-find needs a pattern, found the number 5")},

		// every? some filter map
		{src: `(every? number? [1 2.5])`, want: passes},
		{src: `(every? #(> % 0) [])`, want: passes},
		{src: `(every? string? nil)`, want: passes},
		{src: `(every? #(> % 0) [1 -1])`, want: isFalse},
		{src: `(every? :id (:items data/result))`, want: passes},
		{src: `(every? :id [{:id 1} {:id nil}])`, want: isFalse},
		{src: `(every? count [[1] []])`, want: passes}, // 0 is truthy
		{src: `(every? #(> % 0) [1 nil])`, want: errs(`#(> % 0)`, "cannot compare nil with the number 0")},
		{src: `(every? #(> % 0) 5)`, want: errs(`(every? #(> % 0) 5)`, "cannot iterate over the number 5")},
		{src: `(= (some #(when (> % 1) (* % 10)) [1 2 3]) 20)`, want: passes},
		{src: `(nil? (some #(> % 5) [1 2]))`, want: passes},
		{src: `(= (some #(> % 1) [1 2]) true)`, want: passes},
		{src: `(= (some :name [{:x 1} {:name "n"}]) "n")`, want: passes},
		{src: `(nil? (some :x []))`, want: passes},
		{src: `(= (filter #(> % 1) [1 2 3]) [2 3])`, want: passes},
		{src: `(= (filter :tags (:items data/result)) (:items data/result))`, want: passes}, // [] is truthy
		{src: `(= (filter :ok [{:ok false} {:ok 1} {}]) [{"ok" 1}])`, want: passes},
		{src: `(= (filter string? [1 "a" :b nil]) ["a"])`, want: passes},
		{src: `(= (filter #(> (count (last %)) 0) {:a [1] :b []}) [["a" [1]]])`, want: passes}, // map entries
		{src: `(= (filter #(= % "b") "abc") ["b"])`, want: passes},                             // characters
		{src: `(= (map :id (:items data/result)) [1 2])`, want: passes},
		{src: `(= (map #(* % %) [1 2 3]) [1 4 9])`, want: passes},
		{src: `(= (map upper-case "ab") ["A" "B"])`, want: passes},
		{src: `(= (map count ["a" "bb" nil]) [1 2 0])`, want: passes},
		{src: `(= (map (fn [e] (first e)) {:b 1 :a 2}) ["a" "b"])`, want: passes},

		// distinct sort sum avg
		{src: `(= (distinct [1 2 1 3 2]) [1 2 3])`, want: passes},
		{src: `(= (distinct [1 1.0 2]) [1 2])`, want: passes},
		{src: `(int? (first (distinct [1 1.5])))`, want: passes},
		{src: `(= (count (distinct [{:a 1} {"a" 1.0} {:a 2} [1] [1.0]])) 3)`, want: passes},
		{src: `(= (count (distinct [:a "a" nil false 0 -0.0])) 5)`, want: passes},
		{src: `(and (= (distinct []) []) (= (distinct nil) []) (= (distinct "abca") ["a" "b" "c"]))`, want: passes},
		{src: `(= (sort [3 1.5 2]) [1.5 2 3])`, want: passes},
		{src: `(= (sort ["pear" "apple" "fig"]) ["apple" "fig" "pear"])`, want: passes},
		{src: `(and (= (sort []) []) (= (sort nil) []))`, want: passes},
		{src: `(sort [1 "a"])`, want: errs(`(sort [1 "a"])`, `sort: cannot compare the string "a" with the number 1`)},
		{src: `(sort [nil 1])`, want: errs(`(sort [nil 1])`, `sort: cannot compare the number 1 with nil`)},
		{src: `(and (= (sum [1 2 3.5]) 6.5) (= (sum []) 0) (int? (sum [1 2])) (= (sum nil) 0))`, want: passes},
		{src: `(sum [1 nil])`, want: errs(`(sum [1 nil])`, "sum: cannot do arithmetic with nil")},
		{src: `(sum 5)`, want: errs(`(sum 5)`, "sum: cannot iterate over the number 5")},
		{src: `(and (= (avg [1 2]) 1.5) (nil? (avg [])) (= (avg (map :price (:items data/result))) 2.25))`, want: passes},
		{src: `(avg ["a"])`, want: errs(`(avg ["a"])`, `avg: cannot do arithmetic with the string "a"`)},
	})
}

func TestVerdicts(t *testing.T) {
	runEvalCases(t, []evalCase{
		{src: `true`, want: passes},
		{src: `"the output is empty"`, want: fails("the output is empty")},
		{src: `false`, want: isFalse},
		{src: `(> (count (:items data/result)) 5)`, want: isFalse},
		{src: `nil`, want: returns("nil")},
		{src: `42`, want: returns("the number 42")},
		{src: `2.5`, want: returns("the number 2.5")},
		{src: `(:count data/result)`, want: returns("the number 2.0")},
		{src: `{:a 1}`, want: returns("a map of 1")},
		{src: `[1 2]`, want: returns("a vector of 2")},
		{src: `:done`, want: returns("the keyword :done")},
		{src: `(get data/result "missing")`, want: returns("nil")},
		{src: `(if (= (:count data/result) 3) true (str "expected 3 items, got " (count (:items data/result))))`,
			want: fails("expected 3 items, got 2")},
		{src: `""`, want: fails(`predicate returned an empty diagnosis string: ""`)},
	})
}

// A predicate that cannot decide is an error, never a verdict; errors name
// the innermost form that failed.
func TestRuntimeErrors(t *testing.T) {
	for _, tc := range []struct {
		src, form, msg string
		pos            verify.Pos
	}{
		{"(and (map? data/result)\n     (> (:missing data/result) 0))", "(> (:missing data/result) 0)",
			"cannot compare nil with the number 0", verify.Pos{Line: 2, Column: 6}},
		{`(every? (fn [s] (> (count s) 1)) ["ab" 5])`, "(count s)", "cannot count the number 5", verify.Pos{Line: 1, Column: 20}},
		{`(every? #(> % 0) [1 nil])`, "#(> % 0)", "cannot compare nil with the number 0", verify.Pos{Line: 1, Column: 9}},
		{`(let [n (+ 1 nil)] true)`, "(+ 1 nil)", "+: cannot do arithmetic with nil", verify.Pos{Line: 1, Column: 9}},
		{`(> (count 5) 0)`, "(count 5)", "cannot count the number 5", verify.Pos{Line: 1, Column: 4}},
		{`(= (count 5) "x")`, "(count 5)", "cannot count the number 5", verify.Pos{Line: 1, Column: 4}},
		{`(= "x" (count 5))`, "(count 5)", "cannot count the number 5", verify.Pos{Line: 1, Column: 8}},
		{`(= (= (count "ab") (count 5)) true)`, "(count 5)", "cannot count the number 5", verify.Pos{Line: 1, Column: 20}},
		{`(-> data/result :name (subs 10))`, "(subs 10)", "subs: range 10..3 out of bounds for a string of 3 characters", verify.Pos{Line: 1, Column: 23}},
		{`(if (:ok data/result) (/ (:count data/result) 0) true)`, "(/ (:count data/result) 0)", "division by zero", verify.Pos{Line: 1, Column: 23}},
		{"(cond\n  (empty? data/result) \"empty\"\n  (< (:name data/result) 1) \"low\"\n  :else true)",
			"(< (:name data/result) 1)", `cannot compare the string "Ann" with the number 1`, verify.Pos{Line: 3, Column: 3}},
		{"(let [é \"ü\"]\n  (+ é 1))", "(+ é 1)", `+: cannot do arithmetic with the string "ü"`, verify.Pos{Line: 2, Column: 3}},
	} {
		t.Run(tc.src, func(t *testing.T) {
			p, err := verify.Compile(tc.src)
			require.NoError(t, err)
			v, err := p.Eval(context.Background(), fixture(t))
			assert.Equal(t, verify.Verdict{}, v)
			var re *verify.RuntimeError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.form, re.Form)
			assert.Equal(t, tc.pos, re.Pos)
			assert.Equal(t, tc.msg, re.Err.Error())
			assert.Equal(t, fmt.Sprintf("%s: %s: %s", tc.pos, tc.form, tc.msg), err.Error())
			var ce *verify.CompileError
			assert.False(t, errors.As(err, &ce))
			assert.False(t, errors.Is(err, verify.ErrTimeout))
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		src  string
		pos  verify.Pos
		msg  string
		opts []verify.Option
	}{
		// The predicate as a whole.
		{src: ``, pos: verify.Pos{Line: 1, Column: 1}, msg: "empty predicate: write one form, e.g. (map? data/result)"},
		{src: "; only a comment\n", pos: verify.Pos{Line: 1, Column: 1}, msg: "empty predicate: write one form, e.g. (map? data/result)"},
		{src: `(= 1 1) (= 2 2)`, pos: verify.Pos{Line: 1, Column: 9}, msg: "a predicate is one form, but another follows the first; wrap them in (and ...)"},
		{src: `(count [1 2 3 4 5 6 7 8 9 10])`, pos: verify.Pos{Line: 1, Column: 1}, msg: "predicate too large: over 10 nodes", opts: []verify.Option{verify.WithMaxNodes(10)}},
		{src: strings.Repeat("[", 501), pos: verify.Pos{Line: 1, Column: 501}, msg: "forms nested deeper than 500 levels"},
		// Unbalanced.
		{src: `(+ 1`, pos: verify.Pos{Line: 1, Column: 1}, msg: `unclosed "(": expected ')' before the end of the predicate`},
		{src: "(and true\n  [1 2", pos: verify.Pos{Line: 2, Column: 3}, msg: `unclosed "[": expected ']' before the end of the predicate`},
		{src: `#(= % 1`, pos: verify.Pos{Line: 1, Column: 1}, msg: `unclosed "#(": expected ')' before the end of the predicate`},
		{src: `(= 1 1))`, pos: verify.Pos{Line: 1, Column: 8}, msg: `unexpected ')': nothing is open here`},
		{src: `(= [1 2) 3)`, pos: verify.Pos{Line: 1, Column: 8}, msg: `unexpected ')': the "[" opened at 1:4 is not closed`},
		{src: `{:a 1 :b}`, pos: verify.Pos{Line: 1, Column: 1}, msg: "a map needs an even number of forms (key value pairs), found 3"},
		// Bad literals.
		{src: `(= 1.2.3 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: `invalid number "1.2.3"`},
		{src: `(= 0x1F 31)`, pos: verify.Pos{Line: 1, Column: 4}, msg: `invalid number "0x1F"`},
		{src: `(= 12abc 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: `invalid number "12abc"`},
		{src: `(= 1e999 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: `invalid number "1e999"`},
		{src: `(= "abc 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: `unterminated string: expected a closing '"'`},
		{src: `(= "a\qb" 1)`, pos: verify.Pos{Line: 1, Column: 6}, msg: `invalid escape \q in string`},
		{src: `(= "\u12" 1)`, pos: verify.Pos{Line: 1, Column: 5}, msg: `invalid \u escape: expected four hexadecimal digits`},
		{src: `(= : 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: "a keyword needs a name after ':'"},
		{src: `#{1 2}`, pos: verify.Pos{Line: 1, Column: 1}, msg: `unsupported reader macro "#"; only #( ) and #"regex" are known`},
		{src: `'(1 2)`, pos: verify.Pos{Line: 1, Column: 1}, msg: `unsupported reader macro "'": quoting is not part of the predicate language`},
		{src: `{1 2}`, pos: verify.Pos{Line: 1, Column: 2}, msg: "map keys must be strings or keywords, found 1"},
		{src: `(re-find #"(" "x")`, pos: verify.Pos{Line: 1, Column: 10}, msg: "invalid regex: error parsing regexp: missing closing ): `(`"},
		{src: `(re-find #"(a)\1" "aa")`, pos: verify.Pos{Line: 1, Column: 10}, msg: "invalid regex: error parsing regexp: invalid escape sequence: `\\1`"},
		// Unknown symbols and functions.
		{src: `(= x 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: "unknown symbol x"},
		{src: `(map? result)`, pos: verify.Pos{Line: 1, Column: 7}, msg: "unknown symbol result; the data is data/input, data/result and data/depends"},
		{src: `(map? data/output)`, pos: verify.Pos{Line: 1, Column: 7}, msg: "unknown symbol data/output; the data is data/input, data/result and data/depends"},
		{src: `(= % 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: "unknown symbol %"},
		{src: `(cuont data/result)`, pos: verify.Pos{Line: 1, Column: 2}, msg: "unknown function cuont (did you mean count)"},
		{src: `(inc 1)`, pos: verify.Pos{Line: 1, Column: 2}, msg: "unknown function inc"},
		{src: `(contain? data/result "a")`, pos: verify.Pos{Line: 1, Column: 2}, msg: "unknown function contain? (did you mean contains?)"},
		{src: `{:a 1 "a" 2}`, pos: verify.Pos{Line: 1, Column: 7}, msg: `duplicate map key "a"`},
		{src: `(get data/result ::a)`, pos: verify.Pos{Line: 1, Column: 18}, msg: "invalid keyword ::a: auto-resolved keywords (::k) are not part of the predicate language"},
		{src: `(frobnicate 1)`, pos: verify.Pos{Line: 1, Column: 2}, msg: "unknown function frobnicate"},
		{src: `(let [x 1] (bogus x) true)`, pos: verify.Pos{Line: 1, Column: 13}, msg: "unknown function bogus"}, // unused forms are checked
		{src: `(= count 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: "count is a function, not a value: call it as (count ...)"},
		{src: `(= if 1)`, pos: verify.Pos{Line: 1, Column: 4}, msg: "if is a function, not a value: call it as (if ...)"},
		{src: `(1 2)`, pos: verify.Pos{Line: 1, Column: 2}, msg: "1 cannot be called: the first element of a list must be a function"},
		{src: `("f" 2)`, pos: verify.Pos{Line: 1, Column: 2}, msg: `"f" cannot be called: the first element of a list must be a function`},
		{src: `(let [x 1] (x 2))`, pos: verify.Pos{Line: 1, Column: 13}, msg: "x is a value, not a function"},
		// Wrong arity.
		{src: `(count)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "count takes 1 argument, found 0"},
		{src: `(count [] [])`, pos: verify.Pos{Line: 1, Column: 1}, msg: "count takes 1 argument, found 2"},
		{src: `(get data/result)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "get takes at least 2 arguments, found 1"},
		{src: `(subs "abc" 1 2 3)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "subs takes 2 to 3 arguments, found 4"},
		{src: `(mod 1)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "mod takes 2 arguments, found 1"},
		{src: `(=)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "= takes at least 1 argument, found 0"},
		{src: `(every? number?)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "every? takes 2 arguments, found 1"},
		{src: `(if true)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "if takes at least 2 arguments, found 1"},
		{src: `(if true 1 2 3)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "if takes 2 to 3 arguments, found 4"},
		{src: `(when true)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "when takes at least 2 arguments, found 1"},
		{src: `(not 1 2)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "not takes 1 argument, found 2"},
		{src: `(:k)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "(:k m) takes a map and an optional default, found 0 arguments"},
		// Special forms used wrongly.
		{src: `(fn [x] x)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "fn is a function: pass it to every?, some, filter or map"},
		{src: `#(= % 1)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "#( ) is a function: pass it to every?, some, filter or map"},
		{src: `(every? #(every? #(= % 1) %) [[1]])`, pos: verify.Pos{Line: 1, Column: 18}, msg: "#( ) forms cannot be nested; use (fn [x] ...) for the inner one"},
		{src: `(every? (fn [a b] a) [1])`, pos: verify.Pos{Line: 1, Column: 9}, msg: "every? needs a function of one argument: (fn [x] body)"},
		{src: `(map (fn [x]) [1])`, pos: verify.Pos{Line: 1, Column: 6}, msg: "map needs a function of one argument: (fn [x] body)"},
		{src: `(filter 5 [1])`, pos: verify.Pos{Line: 1, Column: 9}, msg: "filter needs a function as its first argument: (fn [x] ...), #(... % ...), a keyword or a function name"},
		{src: `(some get [1])`, pos: verify.Pos{Line: 1, Column: 7}, msg: "some needs a function as its first argument: (fn [x] ...), #(... % ...), a keyword or a function name"},
		{src: `(let [f 1] (map f [1]))`, pos: verify.Pos{Line: 1, Column: 17}, msg: "map needs a function as its first argument: (fn [x] ...), #(... % ...), a keyword or a function name"},
		{src: `(every? (fn [1] true) [1])`, pos: verify.Pos{Line: 1, Column: 14}, msg: "a binding name must be a symbol, found 1"},
		{src: `(let [x] x)`, pos: verify.Pos{Line: 1, Column: 6}, msg: "let bindings come in name/value pairs, found an odd number of forms"},
		{src: `(let x 1)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "let takes a vector of bindings and a body: (let [x 1] (+ x 1))"},
		{src: `(let [x 1])`, pos: verify.Pos{Line: 1, Column: 1}, msg: "let takes a vector of bindings and a body: (let [x 1] (+ x 1))"},
		{src: `(let [1 2] true)`, pos: verify.Pos{Line: 1, Column: 7}, msg: "a binding name must be a symbol, found 1"},
		{src: `(let [data/input 1] true)`, pos: verify.Pos{Line: 1, Column: 7}, msg: "cannot bind data/input: names with a namespace are reserved"},
		{src: `(let [if 1] true)`, pos: verify.Pos{Line: 1, Column: 7}, msg: "cannot bind if: it is a special form"},
		{src: `(let [x y y 1] true)`, pos: verify.Pos{Line: 1, Column: 9}, msg: "unknown symbol y"}, // bindings are sequential
		{src: `(cond true)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "cond takes test/expression pairs, found an odd number of forms"},
		{src: `(->)`, pos: verify.Pos{Line: 1, Column: 1}, msg: "-> needs a value to thread"},
		{src: `(-> data/result 5)`, pos: verify.Pos{Line: 1, Column: 17}, msg: "-> steps must be calls, function names or keywords, found 5"},
		{src: `(->> data/result #(count %))`, pos: verify.Pos{Line: 1, Column: 18}, msg: "->> steps must be calls, function names or keywords, found #(count %)"},
		// Positions count lines and characters.
		{src: "(and (map? data/result)\n     (> (count data/result) 0)\n     (bogus 1))", pos: verify.Pos{Line: 3, Column: 7}, msg: "unknown function bogus"},
		{src: `(= "é" x)`, pos: verify.Pos{Line: 1, Column: 8}, msg: "unknown symbol x"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			p, err := verify.Compile(tc.src, tc.opts...)
			require.Nil(t, p)
			var ce *verify.CompileError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.msg, ce.Msg)
			assert.Equal(t, tc.pos, ce.Pos)
			assert.True(t, strings.HasPrefix(err.Error(), tc.pos.String()+": "+tc.msg+"\n"), err.Error())
			assert.True(t, strings.HasSuffix(ce.Snippet, "^"), ce.Snippet)
			var re *verify.RuntimeError
			assert.False(t, errors.As(err, &re))
		})
	}
}

func TestCompileErrorSnippet(t *testing.T) {
	src := "(and (map? data/result)\n     (> (count data/result) 0)\n     (bogus 1))"
	_, err := verify.Compile(src)
	require.Error(t, err)
	assert.Equal(t, "3:7: unknown function bogus\n"+
		"       (bogus 1))\n"+
		"        ^", err.Error())

	// A tab stays a tab so that the caret lines up; a wide character is
	// one column.
	_, err = verify.Compile("(and\n\t(= \"é\" nope))")
	require.Error(t, err)
	assert.Equal(t, "2:9: unknown symbol nope\n"+
		"  \t(= \"é\" nope))\n"+
		"  \t       ^", err.Error())

	// The end of the predicate.
	_, err = verify.Compile(`(= 1 "x`)
	require.Error(t, err)
	assert.Equal(t, "1:6: unterminated string: expected a closing '\"'\n"+
		"  (= 1 \"x\n"+
		"       ^", err.Error())
}

func TestCheck(t *testing.T) {
	const mustReturn = ", but it must return true, false or a diagnosis string"
	const onlyTrue = ", never true; only true passes, e.g. (if ok true \"diagnosis\")"
	for _, tc := range []struct {
		src  string
		want []verify.Diagnostic
	}{
		// Predicates that can pass.
		{`(map? data/result)`, nil},
		{`(get data/result "ok")`, nil},
		{`(if (map? data/result) true "not a map")`, nil},
		{`(cond (empty? data/result) "empty" :else true)`, nil},
		{`(and)`, nil},
		{`(some :ok data/result)`, nil},
		{`(first data/result)`, nil},
		// Predicates that cannot.
		{`42`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns a number" + mustReturn}}},
		{"; items\n  (count data/result)", []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 2, Column: 3}, Message: "never passes: the predicate always returns a number" + mustReturn}}},
		{`(if (map? data/result) 1 2.5)`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns a number" + mustReturn}}},
		{`(when (map? data/result) (count data/result))`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns nil or a number" + mustReturn}}},
		{`(map :id data/result)`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns a vector" + mustReturn}}},
		{`{:ok true}`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns a map" + mustReturn}}},
		{`nil`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns nil" + mustReturn}}},
		{`:ok`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns a keyword" + mustReturn}}},
		{`false`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate is the constant false"}}},
		{`(when (empty? data/result) "no output")`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns nil or a string" + onlyTrue}}},
		{`(str "count: " (count data/result))`, []verify.Diagnostic{{Severity: verify.SeverityWarning, Pos: verify.Pos{Line: 1, Column: 1}, Message: "never passes: the predicate always returns a string" + onlyTrue}}},
		// Compile errors.
		{`(+ 1`, []verify.Diagnostic{{Severity: verify.SeverityError, Pos: verify.Pos{Line: 1, Column: 1}, Message: `unclosed "(": expected ')' before the end of the predicate`}}},
		{"(and true\n  (cuont data/result))", []verify.Diagnostic{{Severity: verify.SeverityError, Pos: verify.Pos{Line: 2, Column: 4}, Message: "unknown function cuont (did you mean count)"}}},
	} {
		t.Run(tc.src, func(t *testing.T) {
			assert.Equal(t, tc.want, verify.Check(tc.src))
		})
	}
	d := verify.Check(`42`)
	require.Len(t, d, 1)
	assert.Equal(t, "1:1: warning: never passes: the predicate always returns a number"+mustReturn, d[0].String())
	out, err := json.Marshal(verify.Check(`(+ 1`))
	require.NoError(t, err)
	assert.JSONEq(t, `[{"severity": "error", "pos": {"line": 1, "column": 1}, "message": "unclosed \"(\": expected ')' before the end of the predicate"}]`, string(out))
}

func TestPredicateSource(t *testing.T) {
	src := "(map? data/result) ; a map"
	p, err := verify.Compile(src)
	require.NoError(t, err)
	assert.Equal(t, src, p.Source())
	assert.Equal(t, src, p.String())
}

// bigVector is a vector of n float64s, 0 to n-1.
func bigVector(n int) []any {
	v := make([]any, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

func TestTimeout(t *testing.T) {
	p, err := verify.Compile(`(every? (fn [a] (every? (fn [b] (every? (fn [c] (>= (+ a b c) 0)) data/result)) data/result)) data/result)`,
		verify.WithTimeout(20*time.Millisecond))
	require.NoError(t, err)
	start := time.Now()
	v, err := p.Eval(context.Background(), verify.Bindings{Result: bigVector(2000)})
	elapsed := time.Since(start)
	require.ErrorIs(t, err, verify.ErrTimeout)
	assert.Less(t, elapsed, time.Second)
	assert.Equal(t, verify.Verdict{}, v)
	var re *verify.RuntimeError
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(re.Form, "(every? "), re.Form)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)

	// Work within one element's body is bounded too, not only iteration.
	strs := make([]any, 5000)
	for i := range strs {
		strs[i] = fmt.Sprint(i)
	}
	p, err = verify.Compile(`(every? (fn [x] (> (count (sort data/result)) 0)) data/result)`, verify.WithTimeout(20*time.Millisecond))
	require.NoError(t, err)
	start = time.Now()
	_, err = p.Eval(context.Background(), verify.Bindings{Result: strs})
	require.ErrorIs(t, err, verify.ErrTimeout)
	assert.Less(t, time.Since(start), time.Second)
}

func TestNoTimeout(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		t.Run(d.String(), func(t *testing.T) {
			p, err := verify.Compile(`(every? (fn [a] (every? (fn [b] (>= (+ a b) 0)) data/result)) data/result)`,
				verify.WithTimeout(d))
			require.NoError(t, err)
			v, err := p.Eval(context.Background(), verify.Bindings{Result: bigVector(100)})
			require.NoError(t, err, "no time bound: the evaluation runs to its verdict")
			assert.True(t, v.Passed)
		})
	}
}

func TestDefaultTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a second")
	}
	t.Parallel()
	p, err := verify.Compile(`(every? (fn [a] (every? (fn [b] (every? (fn [c] (>= (+ a b c) 0)) data/result)) data/result)) data/result)`)
	require.NoError(t, err)
	start := time.Now()
	_, err = p.Eval(context.Background(), verify.Bindings{Result: bigVector(2000)})
	elapsed := time.Since(start)
	require.ErrorIs(t, err, verify.ErrTimeout)
	assert.GreaterOrEqual(t, elapsed, time.Second)
	assert.Less(t, elapsed, 3*time.Second)
}

func TestMaxSteps(t *testing.T) {
	// A function body per element and the walk over the collection each
	// count a step: 2n for n elements, on every run.
	src := `(every? (fn [x] (>= x 0)) data/result)`
	b := verify.Bindings{Result: bigVector(1000)}
	for _, tc := range []struct {
		steps uint64
		pass  bool
	}{{0, true}, {2000, true}, {1999, false}, {10, false}} {
		t.Run(fmt.Sprint(tc.steps), func(t *testing.T) {
			p, err := verify.Compile(src, verify.WithTimeout(0), verify.WithMaxSteps(tc.steps))
			require.NoError(t, err)
			for range 3 {
				v, err := p.Eval(context.Background(), b)
				if tc.pass {
					require.NoError(t, err)
					assert.True(t, v.Passed)
					continue
				}
				require.ErrorIs(t, err, verify.ErrStepLimit)
				require.ErrorIs(t, err, verify.ErrTimeout)
				assert.NotErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, `1:1: (every? (fn [x] (>= x 0)) data/result): predicate timed out: step budget exceeded`, err.Error())
			}
		})
	}
}

// The work inside one element's body counts, not only the elements: a
// sort of n elements costs about n·log₂n steps, so a predicate that sorts
// its whole output once per element stops after a few elements, at the
// same form every time.
func TestMaxStepsWithinBody(t *testing.T) {
	p, err := verify.Compile(`(every? (fn [x] (> (count (sort data/result)) 0)) data/result)`,
		verify.WithTimeout(0), verify.WithMaxSteps(1_000_000))
	require.NoError(t, err)
	b := verify.Bindings{Result: bigVector(20_000)}
	var first string
	for i := range 3 {
		start := time.Now()
		_, err := p.Eval(context.Background(), b)
		assert.Less(t, time.Since(start), time.Second)
		require.ErrorIs(t, err, verify.ErrStepLimit)
		var re *verify.RuntimeError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "(sort data/result)", re.Form)
		if i == 0 {
			first = err.Error()
		}
		assert.Equal(t, first, err.Error())
	}
}

// Functions that take constant time cost no step, so that a linear
// predicate stays linear in steps; those that walk their argument cost
// its size.
func TestStepCosts(t *testing.T) {
	nums := bigVector(1000)
	text := strings.Repeat("x", 16_000)
	for _, tc := range []struct {
		src    string
		result any
		steps  uint64 // the fewest steps the evaluation needs
	}{
		{`(every? (fn [x] (< x (count data/result))) data/result)`, nums, 2000},
		{`(every? (fn [x] (some? (get data/result 0))) data/result)`, nums, 2000},
		{`(every? number? data/result)`, nums, 2000},
		{`(= (count (sort data/result)) 1000)`, nums, 1000 + 1000*10},
		{`(= (sum data/result) 499500)`, nums, 2000},
		{`(= (count data/result) 16000)`, text, 1000},
		{`(nil? (re-find #"y" data/result))`, text, 4000},
		{`(= (get-in {:a data/result} [:a 3]) "x")`, text, 1001 + 2},
	} {
		t.Run(tc.src, func(t *testing.T) {
			b := verify.Bindings{Result: tc.result}
			p, err := verify.Compile(tc.src, verify.WithTimeout(0), verify.WithMaxSteps(tc.steps))
			require.NoError(t, err)
			v, err := p.Eval(context.Background(), b)
			require.NoError(t, err)
			assert.True(t, v.Passed, v.Diagnosis)
			p, err = verify.Compile(tc.src, verify.WithTimeout(0), verify.WithMaxSteps(tc.steps-1))
			require.NoError(t, err)
			_, err = p.Eval(context.Background(), b)
			require.ErrorIs(t, err, verify.ErrStepLimit)
		})
	}
}

func TestContext(t *testing.T) {
	p, err := verify.Compile(`(every? (fn [a] (every? (fn [b] (>= (+ a b) 0)) data/result)) data/result)`)
	require.NoError(t, err)
	b := verify.Bindings{Result: bigVector(100_000)}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := p.Eval(ctx, b)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, verify.ErrTimeout)
	assert.Equal(t, verify.Verdict{}, v)
	var re *verify.RuntimeError
	require.ErrorAs(t, err, &re)

	// Cancelled while running.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	_, err = p.Eval(ctx, b)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 500*time.Millisecond)

	// A context deadline before the predicate's timeout.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = p.Eval(ctx, b)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, verify.ErrTimeout)
}

func TestMemoryBudget(t *testing.T) {
	src := `(= (count (map (fn [x] [x x]) data/result)) 10000)`
	b := verify.Bindings{Result: bigVector(10_000)}
	p, err := verify.Compile(src)
	require.NoError(t, err)
	v, err := p.Eval(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, v.Passed)

	p, err = verify.Compile(src, verify.WithMemoryBudget(1000))
	require.NoError(t, err)
	_, err = p.Eval(context.Background(), b)
	var re *verify.RuntimeError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "memory budget exceeded", re.Err.Error())
	assert.Equal(t, "[x x]", re.Form) // the form that built past the budget
}

// Text counts against the memory budget, and walks over values that share
// structure stop at the deadline: a short predicate can build values far
// larger than itself.
func TestBoundedGrowth(t *testing.T) {
	p, err := verify.Compile(`(let [a "0123456789abcdef"
      b (str a a a a a a a a)
      c (str b b b b b b b b)]
  (count c))`, verify.WithMemoryBudget(10))
	require.NoError(t, err)
	_, err = p.Eval(context.Background(), verify.Bindings{})
	var re *verify.RuntimeError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "str: memory budget exceeded", re.Err.Error())
	assert.Equal(t, "(str b b b b b b b b)", re.Form)
	assert.Equal(t, verify.Pos{Line: 3, Column: 9}, re.Pos)

	// The default budget leaves room for printing large data.
	big := strings.Repeat("x", 1<<20)
	p, err = verify.Compile(`(= (count (str data/result data/result)) 2097152)`)
	require.NoError(t, err)
	v, err := p.Eval(context.Background(), verify.Bindings{Result: big})
	require.NoError(t, err)
	assert.True(t, v.Passed)

	let := `(let [a [1 1 1 1] b [a a a a] c [b b b b] d [c c c c] e [d d d d] f [e e e e] g [f f f f]
      h [g g g g] i [h h h h] j [i i i i] k [j j j j] l [k k k k] m [l l l l] n [m m m m]] `
	for _, body := range []string{`(= n [m m m m])`, `(count (str n))`, `(count (distinct [n [m m m m]]))`} {
		t.Run(body, func(t *testing.T) {
			p, err := verify.Compile(let+body+")", verify.WithTimeout(20*time.Millisecond))
			require.NoError(t, err)
			start := time.Now()
			_, err = p.Eval(context.Background(), verify.Bindings{})
			require.ErrorIs(t, err, verify.ErrTimeout)
			assert.Less(t, time.Since(start), time.Second)
		})
	}
}

func TestMaxNodes(t *testing.T) {
	src := `(= [1 2 3 4 5 6 7 8 9 10] [1 2 3 4 5 6 7 8 9 10])`
	_, err := verify.Compile(src, verify.WithMaxNodes(1000))
	require.NoError(t, err)
	_, err = verify.Compile(src, verify.WithMaxNodes(15))
	var ce *verify.CompileError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "predicate too large: over 15 nodes", ce.Msg)
}

// One predicate evaluated from many goroutines at once, each with its own
// bindings, gives each its own verdict. Run with -race.
func TestConcurrentEval(t *testing.T) {
	p, err := verify.Compile(`(let [id (:id data/result)
      want (get data/input "want")]
  (cond
    (not (every? #(< % id) (get data/depends "below"))) "a dependency is not below the id"
    (= id want) true
    :else (str "id " id ", want " want)))`)
	require.NoError(t, err)
	const n = 50
	var wg sync.WaitGroup
	verdicts := make([]verify.Verdict, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := i
			if i%2 == 1 {
				want = i + 100
			}
			b := verify.Bindings{
				Input:   map[string]any{"want": want},
				Result:  map[string]any{"id": i},
				Depends: map[string]any{"below": bigVector(i)},
			}
			for range 20 {
				verdicts[i], errs[i] = p.Eval(context.Background(), b)
				if errs[i] != nil || verdicts[i].Passed != (i%2 == 0) {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		if i%2 == 0 {
			assert.Equal(t, verify.Verdict{Passed: true}, verdicts[i], "goroutine %d", i)
		} else {
			assert.Equal(t, verify.Verdict{Diagnosis: fmt.Sprintf("id %d, want %d", i, i+100)}, verdicts[i], "goroutine %d", i)
		}
	}
}

// The same bindings give the same verdict, whatever the order Go iterates
// maps in.
func TestDeterministic(t *testing.T) {
	p, err := verify.Compile(`(str (keys data/result) " " (vals data/depends) " " data/result " "
  (map first data/result) " " (distinct (vals data/result)) " " (sort (keys data/depends)))`)
	require.NoError(t, err)
	b := verify.Bindings{
		Result:  map[string]any{"z": 1, "a": 2, "m": "x", "b": 1.0, "k": []any{3, "y"}, "c": map[string]any{"q": 1, "p": 2}},
		Depends: map[string]any{"t3": "c", "t1": "a", "t2": "b", "t4": nil},
	}
	first, err := p.Eval(context.Background(), b)
	require.NoError(t, err)
	assert.Equal(t, `["a" "b" "c" "k" "m" "z"] ["a" "b" "c" nil] {"a" 2, "b" 1.0, "c" {"p" 2, "q" 1}, "k" [3 "y"], "m" "x", "z" 1} `+
		`["a" "b" "c" "k" "m" "z"] [2 1.0 {"p" 2, "q" 1} [3 "y"] "x"] ["t1" "t2" "t3" "t4"]`, first.Diagnosis)
	for range 100 {
		v, err := p.Eval(context.Background(), b)
		require.NoError(t, err)
		require.Equal(t, first, v)
	}
}

// Bindings of Go types other than encoding/json's are seen as JSON would
// show them.
func TestForeignBindings(t *testing.T) {
	type item struct {
		Name  string   `json:"name"`
		Tags  []string `json:"tags"`
		Count int      `json:"count"`
		Skip  string   `json:"-"`
	}
	runEvalCases(t, []evalCase{
		{src: `(and (= (:name data/result) "x") (= (:tags data/result) ["a" "b"]) (= (:count data/result) 2) (int? (:count data/result)) (not (contains? data/result :Skip)))`,
			want: passes, b: &verify.Bindings{Result: item{Name: "x", Tags: []string{"a", "b"}, Count: 2, Skip: "s"}}},
		{src: `(= data/result {"name" "x" "tags" nil "count" 0})`, want: passes, b: &verify.Bindings{Result: &item{Name: "x"}}},
		{src: `(nil? data/result)`, want: passes, b: &verify.Bindings{Result: (*item)(nil)}},
		{src: `(= data/result {"tags" ["a" "b"] "scores" {"x" 1}})`,
			want: passes, b: &verify.Bindings{Result: map[string]any{"tags": []string{"a", "b"}, "scores": map[string]int{"x": 1}}}},
		{src: `(and (every? string? (:tags data/result)) (= (count (:tags data/result)) 2) (= (first (:tags data/result)) "a"))`,
			want: passes, b: &verify.Bindings{Result: map[string]any{"tags": []string{"a", "b"}}}},
		{src: `(= (str data/result) "{\"scores\" {\"x\" 1}, \"tags\" [\"a\" \"b\"]}")`,
			want: passes, b: &verify.Bindings{Result: map[string]any{"tags": []string{"a", "b"}, "scores": map[string]int{"x": 1}}}},
		{src: `(= (vals data/result) [[1 2]])`, want: passes, b: &verify.Bindings{Result: map[string]any{"v": []int{1, 2}}}},
		{src: `(and (= (get-in data/result [:scores :x]) 1) (> (max (get-in data/result [:scores :x]) 0) 0) (= (min (get-in data/result [:scores :x])) 1))`,
			want: passes, b: &verify.Bindings{Result: map[string]any{"scores": map[string]int{"x": 1}}}},
		{src: `(= (get-in data/depends [:fetch :tags 1]) "b")`,
			want: passes, b: &verify.Bindings{Depends: map[string]any{"fetch": item{Tags: []string{"a", "b"}}}}},
		{src: `(= data/result ["a" "b"])`, want: passes, b: &verify.Bindings{Result: []string{"a", "b"}}},
		{src: `(= (distinct data/result) [1 [] 2])`, want: passes, b: &verify.Bindings{Result: []any{1, []int{}, uint8(2), 1.0, []int{}}}},
		{src: `(= (sort data/result) [1 2 3])`, want: passes, b: &verify.Bindings{Result: []any{uint8(3), int32(1), json.Number("2")}}},
		{src: `(and (= (+ data/input 1) 4) (int? data/input) (= (str data/input) "3") (> data/input 2.5))`,
			want: passes, b: &verify.Bindings{Input: json.Number("3")}},
		{src: `(and (= (nth [10 20] data/input) 20) (= (get-in {"a" [5 6]} ["a" data/input]) 6))`,
			want: passes, b: &verify.Bindings{Input: uint16(1)}},
		{src: `(= data/input "2024-01-02T03:04:05Z")`, want: passes, b: &verify.Bindings{Input: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{src: `(= data/input 3600000000000)`, want: passes, b: &verify.Bindings{Input: time.Hour}},
	})
	// The bindings are not changed.
	result := []any{3.0, 1.0, 2.0}
	p, err := verify.Compile(`(= (sort data/result) [1 2 3])`)
	require.NoError(t, err)
	v, err := p.Eval(context.Background(), verify.Bindings{Result: result})
	require.NoError(t, err)
	assert.True(t, v.Passed)
	assert.Equal(t, []any{3.0, 1.0, 2.0}, result)
}

// Regressions: each of these once failed.
func TestRegressions(t *testing.T) {
	// Comparisons nested in comparisons compiled in time exponential in
	// the depth.
	src := "true"
	for range 60 {
		src = "(= " + src + " true)"
	}
	var (
		p   *verify.Predicate
		err error
	)
	within(t, 5*time.Second, "Compile", func() { p, err = verify.Compile(src) })
	require.NoError(t, err)
	v, err := p.Eval(context.Background(), verify.Bindings{})
	require.NoError(t, err)
	assert.True(t, v.Passed)

	// distinct took quadratic time, with no check of the deadline.
	strs := make([]any, 50_000)
	for i := range strs {
		strs[i] = fmt.Sprint(i % 40_000)
	}
	p, err = verify.Compile(`(= (count (distinct data/result)) 40000)`)
	require.NoError(t, err)
	start := time.Now()
	v, err = p.Eval(context.Background(), verify.Bindings{Result: strs})
	require.NoError(t, err)
	assert.True(t, v.Passed)
	assert.Less(t, time.Since(start), time.Second)
}

// Integers beyond 64 bits, as JSON outputs carry them, compare exactly:
// they once compared by their float value, so that 2^64+1 equalled 2^64.
func TestBigIntegers(t *testing.T) {
	tests := []struct {
		result string // data/result as JSON
		src    string
		want   bool
	}{
		{`18446744073709551617`, `(= data/result 18446744073709551617)`, true},
		{`18446744073709551617`, `(= data/result 18446744073709551616)`, false},
		{`18446744073709551616`, `(= data/result 18446744073709551617)`, false},
		{`18446744073709551617`, `(not= data/result 18446744073709551616)`, true},
		{`18446744073709551617`, `(> data/result 18446744073709551616)`, true},
		{`18446744073709551617`, `(< data/result 18446744073709551618)`, true},
		{`18446744073709551617`, `(= data/result 1.8446744073709552e19)`, false},
		{`18446744073709551616`, `(= data/result 1.8446744073709552e19)`, true},
		{`18446744073709551616`, `(> data/result 9223372036854775807)`, true},
		{`18446744073709551616`, `(< 1.5 data/result)`, true},
		{`-18446744073709551617`, `(< data/result -18446744073709551616)`, true},
		{`-18446744073709551617`, `(< data/result 0 0.5 18446744073709551617)`, true},
		{`[18446744073709551617, 18446744073709551616]`, `(= data/result [18446744073709551617 18446744073709551616])`, true},
		{`[18446744073709551617, 18446744073709551616]`, `(= (first data/result) (nth data/result 1))`, false},
		{`[18446744073709551617, 18446744073709551616, 18446744073709551617]`, `(= (count (distinct data/result)) 2)`, true},
		{`[18446744073709551617, 18446744073709551616]`, `(= (sort data/result) [18446744073709551616 18446744073709551617])`, true},
		{`18446744073709551617`, `(= (str data/result) "18446744073709551617")`, true},
		{`18446744073709551617`, `(and (number? data/result) (int? data/result))`, true},
		// Past the float range too.
		{"1" + strings.Repeat("0", 400), `(> data/result 1e308)`, true},
		{"1" + strings.Repeat("0", 400), `(= data/result 1` + strings.Repeat("0", 399) + `1)`, false},
		{"1" + strings.Repeat("0", 400), `(= data/result 1` + strings.Repeat("0", 400) + `)`, true},
		{"1" + strings.Repeat("0", 400), `(= data/result data/result)`, true},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			result, err := jsonv.DecodeBytes([]byte(tc.result))
			require.NoError(t, err)
			p, err := verify.Compile(tc.src)
			require.NoError(t, err)
			v, err := p.Eval(context.Background(), verify.Bindings{Result: result})
			require.NoError(t, err)
			assert.Equal(t, tc.want, v.Passed, "%+v", v)
		})
	}
}
