package verify

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// Keyword is the value of a keyword such as :items. It is a type of its
// own so that (= :k "k") is false, while (get m :k) still finds "k".
type Keyword string

func (k Keyword) String() string { return ":" + string(k) }

// Values in the predicate language are what encoding/json produces —
// nil, bool, string, float64 or json.Number, []any, map[string]any — plus
// int64 for integers the predicate computes, and Keyword. An integer too
// large for 64 bits, from JSON or a literal, stays a json.Number: its digits
// are what compares it exactly.

// number reads a numeric value: its float value, its integer value when it
// is an integer, and whether it is a number at all.
func number(v any) (f float64, i int64, isInt, ok bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), n, true, true
	case int:
		return float64(n), int64(n), true, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return n, int64(n), false, true
		}
		return n, 0, false, true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return float64(i), i, true, true
		}
		f, err := n.Float64()
		if err == nil {
			return f, 0, false, true
		}
		// An integer past the float range is still a number, its float
		// value infinite: compareNumbers orders it by its digits.
		if _, ok := bigInteger(n); ok {
			return f, 0, false, true
		}
	case float32:
		return float64(n), 0, false, true
	case int32:
		return float64(n), int64(n), true, true
	}
	return 0, 0, false, false
}

// isInteger reports whether v is an integer number (1 and 1.0 from JSON
// alike: JSON does not tell them apart).
func isInteger(v any) bool {
	f, _, _, ok := number(v)
	return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
}

// truthy is Clojure's truth: everything but nil and false.
func truthy(v any) bool {
	switch b := v.(type) {
	case nil:
		return false
	case bool:
		return b
	}
	return true
}

// equalIn is = : numbers by value across integers and floats, collections
// element by element, keywords only equal to keywords. It stops when st's
// time is up: values that share structure — (let [a [1 1] b [a a] c [b b]]
// ...) — can be far larger than the predicate that built them.
func equalIn(st *state, a, b any) (bool, error) {
	if err := st.step(1 + textCost(a)); err != nil {
		return false, err
	}
	a, b = normalize(a), normalize(b)
	if _, _, _, ok := number(a); ok {
		c, ok := compareNumbers(a, b)
		return ok && c == 0, nil
	}
	switch x := a.(type) {
	case nil:
		return b == nil, nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y, nil
	case string:
		y, ok := b.(string)
		return ok && x == y, nil
	case Keyword:
		y, ok := b.(Keyword)
		return ok && x == y, nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false, nil
		}
		for i := range x {
			if eq, err := equalIn(st, x[i], y[i]); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false, nil
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return false, nil
			}
			if eq, err := equalIn(st, v, w); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	}
	return false, nil
}

// compare orders two numbers or two strings; anything else, nil first of
// all, is an error.
func compare(a, b any) (int, error) {
	if c, ok := compareNumbers(a, b); ok {
		return c, nil
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return strings.Compare(sa, sb), nil
		}
	}
	return 0, fmt.Errorf("cannot compare %s with %s", describe(a), describe(b))
}

// describe names a value for an error message: its type, and the value
// itself when it is short.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case bool:
		return strconv.FormatBool(x)
	case string:
		if len(x) > 30 {
			return "a string"
		}
		return "the string " + strconv.Quote(x)
	case Keyword:
		return "the keyword " + x.String()
	case []any:
		return fmt.Sprintf("a vector of %d", len(x))
	case map[string]any:
		return fmt.Sprintf("a map of %d", len(x))
	}
	if _, _, _, ok := number(v); ok {
		return "the number " + toStr(v)
	}
	return fmt.Sprintf("a %T", v)
}

// toStr is str of one value: nil is "", strings are themselves, and
// everything else prints as Clojure prints it.
func toStr(v any) string {
	var b strings.Builder
	_ = strIn(nil, &b, v)
	return b.String()
}

// strIn writes str of one value to b under st: it stops when st's time is
// up or when b outgrows the memory st has left.
func strIn(st *state, b *strings.Builder, v any) error {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		b.WriteString(x)
		return st.room(b.Len())
	}
	return pr(st, b, v)
}

// pr prints a value as Clojure's pr-str does: strings quoted, nil as nil,
// integers without a point, floats with one, collections in brackets with
// map keys in order. Under a state, it stops as strIn does.
func pr(st *state, b *strings.Builder, v any) error {
	if err := st.tick(); err != nil {
		return err
	}
	switch x := normalize(v).(type) {
	case nil:
		b.WriteString("nil")
	case string:
		b.WriteString(strconv.Quote(x))
	case Keyword:
		b.WriteString(x.String())
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(' ')
			}
			if err := pr(st, b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(' ')
			if err := pr(st, b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		if t, ok := bigInteger(x); ok {
			b.WriteString(t)
			break
		}
		f, i, isInt, ok := number(x)
		switch {
		case !ok:
			fmt.Fprint(b, x)
		case isInt:
			b.WriteString(strconv.FormatInt(i, 10))
		case f == math.Trunc(f) && math.Abs(f) < 1e21:
			b.WriteString(strconv.FormatFloat(f, 'f', 1, 64))
		default:
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	return st.room(b.Len())
}

// canonical writes a text of v that is the same for values that are equal:
// numbers by their float64 value, maps by key order. Values that are not
// equal may share a text (NaN, say), so it is a hash, not an identity. It
// stops as strIn does.
func canonical(st *state, b *strings.Builder, v any) error {
	if err := st.tick(); err != nil {
		return err
	}
	switch x := normalize(v).(type) {
	case []any:
		b.WriteByte('[')
		for _, e := range x {
			if err := canonical(st, b, e); err != nil {
				return err
			}
			b.WriteByte(' ')
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for _, k := range sortedKeys(x) {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(' ')
			if err := canonical(st, b, x[k]); err != nil {
				return err
			}
			b.WriteByte(' ')
		}
		b.WriteByte('}')
	case Keyword:
		b.WriteByte(':')
		b.WriteString(strconv.Quote(string(x)))
	default:
		if f, _, _, ok := number(x); ok {
			if f == 0 {
				f = 0 // -0 = 0
			}
			b.WriteByte('#')
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			return st.room(b.Len())
		}
		return pr(st, b, x)
	}
	return st.room(b.Len())
}

// normalize makes a value JSON-like: a value of another Go type (a struct,
// a typed map or slice) goes through [jsonv.Normalize], so that every
// function of the language sees the same shapes, and a value that cannot
// be made JSON-shaped reads as fmt prints it. The check is shallow and
// cheap, unlike jsonv's: it is made on the bindings and on every value
// taken out of a collection, so that nested values are converted only if
// a predicate reaches them.
func normalize(v any) any {
	if !foreign(v) {
		return v
	}
	out, err := jsonv.Normalize(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return out
}

// foreign reports whether v is not of the shapes the language works on.
func foreign(v any) bool {
	switch v.(type) {
	case nil, bool, string, float64, int64, int, json.Number, Keyword, []any, map[string]any:
		return false
	}
	_, _, _, ok := number(v)
	return !ok
}

// compareNumbers orders two numbers: exactly when both are integers, so
// that integers above 2^53 keep their identity, and exactly too when one
// is an integer beyond 64 bits; else as floats.
func compareNumbers(a, b any) (int, bool) {
	fa, ia, aInt, ok1 := number(a)
	fb, ib, bInt, ok2 := number(b)
	switch {
	case !ok1 || !ok2:
		return 0, false
	case aInt && bInt:
		return cmp.Compare(ia, ib), true
	}
	ta, bigA := bigInteger(a)
	tb, bigB := bigInteger(b)
	switch {
	case bigA && bigB:
		return compareIntegerTexts(ta, tb), true
	case bigA:
		return -compareWithInteger(fb, ib, bInt, ta), true
	case bigB:
		return compareWithInteger(fa, ia, aInt, tb), true
	}
	return cmp.Compare(fa, fb), true
}

// compareWithInteger orders a number of the language — f, or i when isInt
// — against the integer whose decimal text is t, exactly. NaN comes first,
// as cmp.Compare orders it.
func compareWithInteger(f float64, i int64, isInt bool, t string) int {
	switch {
	case isInt:
		return compareIntegerTexts(strconv.FormatInt(i, 10), t)
	case math.IsNaN(f):
		return -1
	case math.IsInf(f, 0):
		return int(math.Copysign(1, f))
	}
	// f lies in [⌊f⌋, ⌊f⌋+1): it is above t when ⌊f⌋ is, or when ⌊f⌋ is t
	// and f has a fraction.
	fl := math.Floor(f)
	if c := compareIntegerTexts(new(big.Float).SetFloat64(fl).Text('f', 0), t); c != 0 || fl == f {
		return c
	}
	return 1
}

// compareIntegerTexts orders two integers written in decimal, each with an
// optional sign and leading zeros, in time linear in their length.
func compareIntegerTexts(a, b string) int {
	negA, da := splitInteger(a)
	negB, db := splitInteger(b)
	if negA != negB {
		if negA {
			return -1
		}
		return 1
	}
	c := cmp.Compare(len(da), len(db))
	if c == 0 {
		c = strings.Compare(da, db)
	}
	if negA {
		return -c
	}
	return c
}

// splitInteger reads an integer's decimal text as its sign and its digits
// without leading zeros; zero is "0" and never negative.
func splitInteger(t string) (neg bool, digits string) {
	switch {
	case strings.HasPrefix(t, "-"):
		neg, t = true, t[1:]
	case strings.HasPrefix(t, "+"):
		t = t[1:]
	}
	t = strings.TrimLeft(t, "0")
	if t == "" {
		return false, "0"
	}
	return neg, t
}

// bigInteger returns the decimal text of v — sign only when negative, no
// leading zeros — when v is a json.Number that is an integer too large for
// 64 bits.
func bigInteger(v any) (string, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return "", false
	}
	return bigIntegerText(string(n))
}

// bigIntegerText returns the canonical text of t when t is an integer, an
// optional sign then decimal digits, too large for 64 bits.
func bigIntegerText(t string) (string, bool) {
	neg, digits := splitInteger(t)
	if digits == "0" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	if neg {
		digits = "-" + digits
	}
	if _, err := strconv.ParseInt(digits, 10, 64); !errors.Is(err, strconv.ErrRange) {
		return "", false
	}
	return digits, true
}
