package verify

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// vtype is what the compiler knows of a value statically: a set of kinds.
type vtype uint16

const (
	tNil vtype = 1 << iota
	tBool
	tNum
	tStr
	tKw
	tVec
	tMap
	tAny = tNil | tBool | tNum | tStr | tKw | tVec | tMap
)

// builtin is a function of the language.
type builtin struct {
	min, max int   // arity; max -1 means any number
	ret      vtype // what it returns
	fn       func(args ...any) (any, error)
	// hof marks the higher-order functions, whose first argument is a
	// function the compiler inlines as an expr closure.
	hof bool
}

// builtins are the functions of the language by name. Their expr names are
// given by exprName.
var builtins = map[string]*builtin{
	"=":    {1, -1, tBool, func(a ...any) (any, error) { return chainEqual(a[0].(*state), a[1:], true) }, false},
	"not=": {1, -1, tBool, func(a ...any) (any, error) { return chainEqual(a[0].(*state), a[1:], false) }, false},
	"<":    {1, -1, tBool, ordered(func(c int) bool { return c < 0 }), false},
	">":    {1, -1, tBool, ordered(func(c int) bool { return c > 0 }), false},
	"<=":   {1, -1, tBool, ordered(func(c int) bool { return c <= 0 }), false},
	">=":   {1, -1, tBool, ordered(func(c int) bool { return c >= 0 }), false},
	"+":    {0, -1, tNum, add, false},
	"-":    {1, -1, tNum, sub, false},
	"*":    {0, -1, tNum, mul, false},
	"/":    {1, -1, tNum, div, false},
	"mod":  {2, 2, tNum, mod, false},
	"abs":  {1, 1, tNum, abs, false},
	"round": {1, 1, tNum, func(a ...any) (any, error) {
		f, _, _, ok := number(a[0])
		if !ok {
			return nil, fmt.Errorf("cannot round %s", describe(a[0]))
		}
		if r := math.Round(f); math.Abs(r) < 1<<63 {
			return int64(r), nil
		}
		return f, nil // too large for an integer, or not finite
	}, false},
	"min": {1, -1, tNum, extreme(func(c int) bool { return c < 0 }), false},
	"max": {1, -1, tNum, extreme(func(c int) bool { return c > 0 }), false},

	"count":     {1, 1, tNum, count, false},
	"empty?":    {1, 1, tBool, func(a ...any) (any, error) { n, err := count(a[0]); return n == int64(0), err }, false},
	"not-empty": {1, 1, tAny, notEmpty, false},
	"get":       {2, 3, tAny, get, false},
	"get-in":    {2, 3, tAny, getIn, false},
	"keys":      {1, 1, tVec | tNil, func(a ...any) (any, error) { return entries(a[0], "keys", 0) }, false},
	"vals":      {1, 1, tVec | tNil, func(a ...any) (any, error) { return entries(a[0], "vals", 1) }, false},
	"contains?": {2, 2, tBool, contains, false},
	"first":     {1, 1, tAny, func(a ...any) (any, error) { return nthOr(a[0], 0, nil, "first") }, false},
	"last":      {1, 1, tAny, last, false},
	"nth":       {2, 3, tAny, nth, false},
	"rest":      {1, 1, tVec, rest, false},

	"map?":        {1, 1, tBool, is(func(v any) bool { _, ok := v.(map[string]any); return ok }), false},
	"vector?":     {1, 1, tBool, is(func(v any) bool { _, ok := v.([]any); return ok }), false},
	"sequential?": {1, 1, tBool, is(func(v any) bool { _, ok := v.([]any); return ok }), false},
	"string?":     {1, 1, tBool, is(func(v any) bool { _, ok := v.(string); return ok }), false},
	"number?":     {1, 1, tBool, is(func(v any) bool { _, _, _, ok := number(v); return ok }), false},
	"int?":        {1, 1, tBool, is(isInteger), false},
	"boolean?":    {1, 1, tBool, is(func(v any) bool { _, ok := v.(bool); return ok }), false},
	"nil?":        {1, 1, tBool, is(func(v any) bool { return v == nil }), false},
	"some?":       {1, 1, tBool, is(func(v any) bool { return v != nil }), false},
	"keyword?":    {1, 1, tBool, is(func(v any) bool { _, ok := v.(Keyword); return ok }), false},

	"str":          {0, -1, tStr, str, false},
	"subs":         {2, 3, tStr, subs, false},
	"includes?":    {2, 2, tBool, strings2("includes?", strings.Contains), false},
	"starts-with?": {2, 2, tBool, strings2("starts-with?", strings.HasPrefix), false},
	"ends-with?":   {2, 2, tBool, strings2("ends-with?", strings.HasSuffix), false},
	"lower-case":   {1, 1, tStr, strings1("lower-case", strings.ToLower), false},
	"upper-case":   {1, 1, tStr, strings1("upper-case", strings.ToUpper), false},
	"re-find":      {2, 2, tStr | tVec | tNil, reFind, false},

	"every?": {2, 2, tBool, nil, true},
	"some":   {2, 2, tAny, nil, true},
	"filter": {2, 2, tVec, nil, true},
	"map":    {2, 2, tVec, nil, true},

	"distinct": {1, 1, tVec, distinct, false},
	"sort":     {1, 1, tVec, sortColl, false},
	"sum":      {1, 1, tNum, sum, false},
	"avg":      {1, 1, tNum | tNil, avg, false},
}

// exprNames are the identifiers the builtins have in generated programs.
var exprNames = func() map[string]string {
	r := strings.NewReplacer("=", "eq", "<", "lt", ">", "gt", "+", "plus", "-", "_", "*", "times", "/", "div", "?", "_p", "!", "_b")
	m := make(map[string]string, len(builtins))
	for name := range builtins {
		m[name] = "f_" + r.Replace(name)
	}
	return m
}()

func exprName(name string) string { return exprNames[name] }

// stateful are the builtins whose first argument is the evaluation's
// state: those that may walk values far larger than the predicate, or build
// text of any length, and count their steps as they go.
var stateful = map[string]bool{"=": true, "not=": true, "str": true, "distinct": true, "get-in": true}

// costs are the steps the other builtins whose work grows with their
// arguments take, counted before they run. A builtin that does constant
// work on any argument — count of a vector, get from a map — costs no step:
// charging it would make a linear predicate such as
// (every? (fn [x] (< x (count data/result))) data/result) look quadratic.
var costs = map[string]func(a []any) int{
	"<":         textsCost,
	">":         textsCost,
	"<=":        textsCost,
	">=":        textsCost,
	"count":     func(a []any) int { return textCost(a[0]) },
	"empty?":    func(a []any) int { return textCost(a[0]) },
	"not-empty": func(a []any) int { return textCost(a[0]) },
	"get":       func(a []any) int { return textCost(a[0]) },
	"contains?": func(a []any) int { return textCost(a[0]) },
	"first":     lookupCost,
	"last":      lookupCost,
	"nth":       lookupCost,
	"keys":      seqCost,
	"vals":      seqCost,
	"rest":      seqCost,
	"sort": func(a []any) int {
		n := size(a[0])
		return seqCost(a) + n*bits.Len(uint(n))
	},
	"sum":          func(a []any) int { return seqCost(a) + size(a[0]) },
	"avg":          func(a []any) int { return seqCost(a) + size(a[0]) },
	"subs":         func(a []any) int { return textCost(a[0]) },
	"includes?":    func(a []any) int { return textCost(a[0]) + textCost(a[1]) },
	"starts-with?": func(a []any) int { return textCost(a[1]) },
	"ends-with?":   func(a []any) int { return textCost(a[1]) },
	"lower-case":   func(a []any) int { return textCost(a[0]) },
	"upper-case":   func(a []any) int { return textCost(a[0]) },
	// A regular expression reads each byte at several times the cost
	// of the plain string functions.
	// A pattern given as a string is compiled on each call, at about a
	// step per byte.
	"re-find": func(a []any) int { return 16*textCost(a[0]) + 4*textCost(a[1]) },
}

// textsCost is the steps of comparing a[0], a[1] ...: the text of each.
func textsCost(a []any) int {
	n := 0
	for _, v := range a {
		n += textCost(v)
	}
	return n
}

// takesState reports whether a builtin's first argument in generated code
// is the evaluation's state.
func takesState(name string) bool { return stateful[name] || costs[name] != nil }

// textCost is the steps of reading v when it is text: one per 16 bytes.
// Other values cost nothing.
func textCost(v any) int {
	if s, ok := v.(string); ok {
		return len(s) / 16
	}
	return 0
}

// size is the number of elements of a collection, or of bytes of a
// string; 0 for anything else.
func size(v any) int {
	switch x := v.(type) {
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	case string:
		return len(x)
	}
	return 0
}

// seqCost is the steps of [seq] on a[0]: one per element it scans, the
// keys of a map sorted, one per byte of a string, as each character
// becomes a string of its own.
func seqCost(a []any) int {
	if m, ok := a[0].(map[string]any); ok {
		return len(m) * bits.Len(uint(len(m)))
	}
	return size(a[0])
}

// lookupCost is the steps of [nthOr] on a[0]: the characters of a string
// read up to the index, the entries of a map put in order.
func lookupCost(a []any) int {
	if _, ok := a[0].(map[string]any); ok {
		return seqCost(a)
	}
	return textCost(a[0])
}

// chainEqual is = when want is true, not= when it is false.
func chainEqual(st *state, a []any, want bool) (any, error) {
	for i := 1; i < len(a); i++ {
		eq, err := equalIn(st, a[i-1], a[i])
		if err != nil {
			return nil, err
		}
		if !eq {
			return !want, nil
		}
	}
	return want, nil
}

func ordered(want func(int) bool) func(a ...any) (any, error) {
	return func(a ...any) (any, error) {
		result := true
		for i := 1; i < len(a); i++ {
			c, err := compare(a[i-1], a[i])
			if err != nil {
				return nil, err
			}
			result = result && want(c)
		}
		return result, nil
	}
}

// arith folds numbers: in integers while every operand is an integer and
// nothing overflows, else in floats.
func arith(op string, a []any, unit int64, intOp func(x, y int64) (int64, bool), floatOp func(x, y float64) float64) (any, error) {
	accF, accI, allInt := float64(unit), unit, true
	for k, v := range a {
		f, i, isInt, ok := number(v)
		if !ok {
			return nil, fmt.Errorf("%s: cannot do arithmetic with %s", op, describe(v))
		}
		if k == 0 && len(a) > 1 {
			accF, accI, allInt = f, i, isInt
			continue
		}
		if allInt && isInt {
			if r, ok := intOp(accI, i); ok {
				accI, accF = r, float64(r)
				continue
			}
		}
		allInt = false
		accF = floatOp(accF, f)
	}
	if allInt {
		return accI, nil
	}
	return accF, nil
}

func add(a ...any) (any, error) { return arith("+", a, 0, addInt, addFloat) }

func addInt(x, y int64) (int64, bool) {
	r := x + y
	return r, (r > x) == (y > 0)
}

func addFloat(x, y float64) float64 { return x + y }

func mul(a ...any) (any, error) {
	return arith("*", a, 1, func(x, y int64) (int64, bool) {
		if x == 0 || y == 0 {
			return 0, true
		}
		r := x * y
		return r, r/y == x && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64)
	}, func(x, y float64) float64 { return x * y })
}

func sub(a ...any) (any, error) {
	if len(a) == 1 {
		a = []any{int64(0), a[0]}
	}
	return arith("-", a, 0, func(x, y int64) (int64, bool) {
		r := x - y
		return r, (r < x) == (y > 0)
	}, func(x, y float64) float64 { return x - y })
}

var errDivByZero = errors.New("division by zero")

func div(a ...any) (any, error) {
	if len(a) == 1 {
		a = []any{int64(1), a[0]}
	}
	for _, v := range a[1:] {
		if f, _, _, ok := number(v); ok && f == 0 {
			return nil, errDivByZero
		}
	}
	return arith("/", a, 1, func(x, y int64) (int64, bool) {
		return x / y, x%y == 0 && !(x == math.MinInt64 && y == -1)
	}, func(x, y float64) float64 { return x / y })
}

// mod is Clojure's: the result has the sign of the divisor.
func mod(a ...any) (any, error) {
	fx, ix, xInt, ok1 := number(a[0])
	fy, iy, yInt, ok2 := number(a[1])
	switch {
	case !ok1:
		return nil, fmt.Errorf("mod: cannot do arithmetic with %s", describe(a[0]))
	case !ok2:
		return nil, fmt.Errorf("mod: cannot do arithmetic with %s", describe(a[1]))
	case fy == 0:
		return nil, errDivByZero
	case xInt && yInt:
		m := ix % iy
		if m != 0 && (m < 0) != (iy < 0) {
			m += iy
		}
		return m, nil
	}
	m := math.Mod(fx, fy)
	if m != 0 && (m < 0) != (fy < 0) {
		m += fy
	}
	return m, nil
}

func abs(a ...any) (any, error) {
	f, i, isInt, ok := number(a[0])
	switch {
	case !ok:
		return nil, fmt.Errorf("abs: cannot do arithmetic with %s", describe(a[0]))
	case isInt && i != math.MinInt64:
		return max(i, -i), nil
	}
	return math.Abs(f), nil
}

// extreme is min or max. The result is an int64 or a float64, like every
// number the arithmetic returns, since the compiler lets expr compare it.
func extreme(better func(int) bool) func(a ...any) (any, error) {
	return func(a ...any) (any, error) {
		best := a[0]
		for _, v := range a {
			if _, _, _, ok := number(v); !ok {
				return nil, fmt.Errorf("cannot compare %s", describe(v))
			}
			if c, _ := compare(v, best); better(c) {
				best = v
			}
		}
		f, i, isInt, _ := number(best)
		if isInt {
			return i, nil
		}
		return f, nil
	}
}

func count(a ...any) (any, error) {
	switch x := a[0].(type) {
	case nil:
		return int64(0), nil
	case string:
		return int64(utf8.RuneCountInString(x)), nil
	case []any:
		return int64(len(x)), nil
	case map[string]any:
		return int64(len(x)), nil
	}
	return nil, fmt.Errorf("cannot count %s", describe(a[0]))
}

func notEmpty(a ...any) (any, error) {
	n, err := count(a[0])
	if err != nil || n == int64(0) {
		return nil, err
	}
	return a[0], nil
}

// key turns a lookup key into a map key: keywords and strings find each
// other.
func key(k any) (string, bool) {
	switch x := k.(type) {
	case string:
		return x, true
	case Keyword:
		return string(x), true
	}
	return "", false
}

// lookup is get with a found flag: maps by string or keyword, vectors and
// strings by integer index, nothing else.
func lookup(coll, k any) (any, bool) {
	switch c := coll.(type) {
	case map[string]any:
		if s, ok := key(k); ok {
			v, found := c[s]
			return normalize(v), found
		}
	case []any:
		if i, ok := index(k); ok && i >= 0 && i < int64(len(c)) {
			return normalize(c[i]), true
		}
	case string:
		if i, ok := index(k); ok && i >= 0 && i < int64(utf8.RuneCountInString(c)) {
			return string([]rune(c)[i]), true
		}
	}
	return nil, false
}

// index reads an index: an integer, or a float with an integer value, which
// is how JSON decoded without UseNumber gives integers.
func index(v any) (int64, bool) {
	f, i, isInt, ok := number(v)
	switch {
	case isInt:
		return i, true
	case ok && f == math.Trunc(f) && math.Abs(f) < 1<<53:
		return int64(f), true
	}
	return 0, false
}

func get(a ...any) (any, error) {
	if v, ok := lookup(a[0], a[1]); ok {
		return v, nil
	}
	if len(a) == 3 {
		return a[2], nil
	}
	return nil, nil
}

// getIn is get-in. It counts a step per key, and the text of a string
// it looks into, as the path comes from the data and may be long.
func getIn(a ...any) (any, error) {
	st, a := a[0].(*state), a[1:]
	path, ok := a[1].([]any)
	if !ok && a[1] != nil {
		return nil, fmt.Errorf("get-in needs a vector of keys, found %s", describe(a[1]))
	}
	v := a[0]
	for _, k := range path {
		if err := st.step(1 + textCost(v)); err != nil {
			return nil, fmt.Errorf("get-in: %w", err)
		}
		var found bool
		if v, found = lookup(v, k); !found {
			if len(a) == 3 {
				return a[2], nil
			}
			return nil, nil
		}
	}
	return v, nil
}

// entries returns a map's keys (i = 0) or values (i = 1), by key order.
func entries(m any, name string, i int) (any, error) {
	switch x := m.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		if len(x) == 0 {
			return nil, nil
		}
		out := make([]any, 0, len(x))
		for _, k := range sortedKeys(x) {
			if i == 0 {
				out = append(out, k)
			} else {
				out = append(out, normalize(x[k]))
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s needs a map, found %s", name, describe(m))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// contains is Clojure's contains?: a key of a map, an index of a vector or
// a string — not a value of a vector.
func contains(a ...any) (any, error) {
	switch a[0].(type) {
	case nil, map[string]any, []any, string:
		_, found := lookup(a[0], a[1])
		return found, nil
	}
	return nil, fmt.Errorf("contains? needs a map, a vector or a string, found %s", describe(a[0]))
}

func nthOr(coll any, i int64, dflt any, name string) (any, error) {
	switch c := coll.(type) {
	case nil:
		return dflt, nil
	case []any, string:
		if v, ok := lookup(c, i); ok {
			return v, nil
		}
		return dflt, nil
	case map[string]any:
		s, _ := seq(c)
		return nthOr(s, i, dflt, name)
	}
	return nil, fmt.Errorf("%s needs a vector, found %s", name, describe(coll))
}

func last(a ...any) (any, error) {
	n, err := count(a[0])
	if err != nil {
		return nil, fmt.Errorf("last needs a vector, found %s", describe(a[0]))
	}
	return nthOr(a[0], n.(int64)-1, nil, "last")
}

func nth(a ...any) (any, error) {
	i, ok := index(a[1])
	if !ok {
		return nil, fmt.Errorf("nth needs an integer index, found %s", describe(a[1]))
	}
	if len(a) == 3 {
		return nthOr(a[0], i, a[2], "nth")
	}
	if a[0] == nil {
		return nil, nil
	}
	n, err := count(a[0])
	if err != nil {
		return nil, fmt.Errorf("nth needs a vector, found %s", describe(a[0]))
	}
	if i < 0 || i >= n.(int64) {
		return nil, fmt.Errorf("index %d out of range for %s", i, describe(a[0]))
	}
	return nthOr(a[0], i, nil, "nth")
}

func rest(a ...any) (any, error) {
	s, err := seq(a[0])
	if err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return []any{}, nil
	}
	return s[1:], nil
}

func is(p func(any) bool) func(a ...any) (any, error) {
	return func(a ...any) (any, error) { return p(a[0]), nil }
}

func str(a ...any) (any, error) {
	st := a[0].(*state)
	var b strings.Builder
	for _, v := range a[1:] {
		if err := strIn(st, &b, v); err != nil {
			return nil, fmt.Errorf("str: %w", err)
		}
	}
	if err := st.charge(b.Len()); err != nil {
		return nil, fmt.Errorf("str: %w", err)
	}
	return b.String(), nil
}

func subs(a ...any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("subs needs a string, found %s", describe(a[0]))
	}
	r := []rune(s)
	start, ok := index(a[1])
	end := int64(len(r))
	if len(a) == 3 {
		var endOK bool
		end, endOK = index(a[2])
		ok = ok && endOK
	}
	if !ok {
		return nil, errors.New("subs needs integer indexes")
	}
	if start < 0 || end < start || end > int64(len(r)) {
		return nil, fmt.Errorf("subs: range %d..%d out of bounds for a string of %d characters", start, end, len(r))
	}
	return string(r[start:end]), nil
}

func strings2(name string, f func(s, sub string) bool) func(a ...any) (any, error) {
	return func(a ...any) (any, error) {
		s, ok1 := a[0].(string)
		sub, ok2 := a[1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s needs two strings, found %s and %s", name, describe(a[0]), describe(a[1]))
		}
		return f(s, sub), nil
	}
}

func strings1(name string, f func(string) string) func(a ...any) (any, error) {
	return func(a ...any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, fmt.Errorf("%s needs a string, found %s", name, describe(a[0]))
		}
		return f(s), nil
	}
}

// reFind is re-find: the first match, or a vector of the match and its
// groups when the pattern has groups, or nil.
func reFind(a ...any) (any, error) {
	var re *regexp.Regexp
	switch p := a[0].(type) {
	case *regexp.Regexp:
		re = p
	case string:
		var err error
		if re, err = regexp.Compile(p); err != nil {
			return nil, fmt.Errorf("re-find: invalid pattern: %v", err)
		}
	default:
		return nil, fmt.Errorf("re-find needs a pattern, found %s", describe(a[0]))
	}
	s, ok := a[1].(string)
	if !ok {
		return nil, fmt.Errorf("re-find needs a string, found %s", describe(a[1]))
	}
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return nil, nil
	}
	if len(m) == 2 {
		return s[m[0]:m[1]], nil
	}
	out := make([]any, 0, len(m)/2)
	for i := 0; i < len(m); i += 2 {
		if m[i] < 0 {
			out = append(out, nil)
		} else {
			out = append(out, s[m[i]:m[i+1]])
		}
	}
	return out, nil
}

// seq is what the higher-order functions iterate over: the elements of a
// vector, the [key value] entries of a map by key, the characters of a
// string, nothing for nil.
func seq(coll any) ([]any, error) {
	switch c := coll.(type) {
	case nil:
		return []any{}, nil
	case []any:
		if !slices.ContainsFunc(c, foreign) {
			return c, nil
		}
		out := make([]any, len(c))
		for i, v := range c {
			out[i] = normalize(v)
		}
		return out, nil
	case map[string]any:
		out := make([]any, 0, len(c))
		for _, k := range sortedKeys(c) {
			out = append(out, []any{k, normalize(c[k])})
		}
		return out, nil
	case string:
		out := make([]any, 0, len(c))
		for _, r := range c {
			out = append(out, string(r))
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot iterate over %s", describe(coll))
}

// distinct keeps the first of equal elements. Elements are bucketed by
// their canonical text, the same for equal values, so that it takes linear
// time rather than quadratic.
func distinct(a ...any) (any, error) {
	st := a[0].(*state)
	s, err := seq(a[1])
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(s))
	seen := make(map[string][]any, len(s))
	var b strings.Builder
	for _, v := range s {
		b.Reset()
		if err := canonical(st, &b, v); err != nil {
			return nil, fmt.Errorf("distinct: %w", err)
		}
		k := b.String()
		found := false
		for _, w := range seen[k] {
			if found, err = equalIn(st, v, w); err != nil {
				return nil, fmt.Errorf("distinct: %w", err)
			}
			if found {
				break
			}
		}
		if !found {
			if err := st.charge(len(k)); err != nil {
				return nil, fmt.Errorf("distinct: %w", err)
			}
			seen[k] = append(seen[k], v)
			out = append(out, v)
		}
	}
	return out, nil
}

func sortColl(a ...any) (any, error) {
	s, err := seq(a[0])
	if err != nil {
		return nil, err
	}
	out := slices.Clone(s)
	var cmpErr error
	slices.SortStableFunc(out, func(x, y any) int {
		c, err := compare(x, y)
		if err != nil && cmpErr == nil {
			cmpErr = fmt.Errorf("sort: %w", err)
		}
		return c
	})
	return out, cmpErr
}

func sum(a ...any) (any, error) {
	s, err := seq(a[0])
	if err != nil {
		return nil, fmt.Errorf("sum: %w", err)
	}
	return arith("sum", s, 0, addInt, addFloat)
}

// avg is the mean of a collection of numbers; nil when it is empty.
func avg(a ...any) (any, error) {
	s, err := seq(a[0])
	if err != nil {
		return nil, fmt.Errorf("avg: %w", err)
	}
	if len(s) == 0 {
		return nil, nil
	}
	total, err := arith("avg", s, 0, addInt, addFloat)
	if err != nil {
		return nil, err
	}
	f, _, _, _ := number(total)
	return f / float64(len(s)), nil
}
