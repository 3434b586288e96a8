package verify

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/checker"
	exprcompiler "github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/vm"
)

// Predicate is a compiled verification predicate. It is safe for concurrent
// use by many goroutines. There is no useful zero Predicate: get one from
// [Compile] or [Set.Compile].
type Predicate struct {
	src     string
	code    string // the expr program's source
	program *vm.Program
	spans   []span // where each form's code lies in code, innermost last
	consts  []any  // keyword and regex literals, as _k[i] in code
	typ     vtype  // what the predicate can return
	cfg     config
}

// Source returns the predicate as written.
func (p *Predicate) Source() string { return p.src }

func (p *Predicate) String() string { return p.src }

// span ties a range of the generated code to the form it came from.
type span struct {
	start, end int
	form       form
}

// Option configures [Compile].
type Option func(*config)

type config struct {
	timeout  time.Duration
	maxSteps uint64
	maxNodes uint
	memory   uint
}

// WithTimeout bounds one evaluation by the wall clock. Default 1s. Zero
// or less sets no time bound: the node and memory bounds still hold, and
// an evaluation's verdict then never depends on how fast the machine is —
// as code that must give the same verdict when it is replayed elsewhere
// needs.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxSteps bounds one evaluation by the work it does, in steps: one
// per element a function body or a higher-order function visits, one per
// element or map entry a function walks — n·log₂n for sorting n — and one
// per 16 bytes of text a string function reads. An evaluation past n steps
// fails with a runtime error matching [ErrStepLimit]. Default 0: no step
// bound. Unlike [WithTimeout], the bound falls at the same point on every
// machine and every run, so a replayed evaluation fails the same way.
func WithMaxSteps(n uint64) Option { return func(c *config) { c.maxSteps = n } }

// WithMaxNodes bounds the size of the compiled program, in expr nodes.
// Default 10,000.
func WithMaxNodes(n uint) Option { return func(c *config) { c.maxNodes = n } }

// WithMemoryBudget bounds the memory one evaluation may allocate, in expr's
// units (about one per collection element built). The text that str and
// distinct build counts apart, against the same budget, one unit per 64
// bytes. Default 1,000,000.
func WithMemoryBudget(n uint) Option { return func(c *config) { c.memory = n } }

// env is what the generated program sees. Bindings go to input, result and
// depends; _k holds the literals that are not expr literals; _st carries
// the deadline to the functions that iterate.
type env struct {
	Input   any    `expr:"input"`
	Result  any    `expr:"result"`
	Depends any    `expr:"depends"`
	K       []any  `expr:"_k"`
	St      *state `expr:"_st"`
}

// exprOptions are the expr options every predicate is compiled with: no
// builtin but the four iteration ones, and the language's functions.
var exprOptions = sync.OnceValue(func() []expr.Option {
	opts := []expr.Option{
		expr.Env(env{}),
		expr.DisableAllBuiltins(),
		expr.EnableBuiltin("all"),
		expr.EnableBuiltin("filter"),
		expr.EnableBuiltin("map"),
		expr.EnableBuiltin("find"),
		expr.Function("f_T", func(a ...any) (any, error) { return truthy(a[0]), nil }),
		expr.Function("f_tick", func(a ...any) (any, error) {
			if err := a[0].(*state).tick(); err != nil {
				return nil, err
			}
			return a[1], nil
		}),
		expr.Function("f_seq", func(a ...any) (any, error) {
			st := a[0].(*state)
			if err := st.step(seqCost(a[1:])); err != nil {
				return nil, err
			}
			if err := st.check(); err != nil {
				return nil, err
			}
			return seq(a[1])
		}),
	}
	for name, b := range builtins {
		if b.hof {
			continue
		}
		fn := b.fn
		if cost := costs[name]; cost != nil {
			fn = func(a ...any) (any, error) {
				if err := a[0].(*state).step(cost(a[1:])); err != nil {
					return nil, err
				}
				return b.fn(a[1:]...)
			}
		}
		opts = append(opts, expr.Function(exprName(name), fn))
	}
	return opts
})

// exprConfigs hold expr configurations with every function registered:
// building one costs more than compiling a predicate with it. A
// configuration caches types as it checks programs, so each is used by one
// compilation at a time.
var exprConfigs = sync.Pool{New: func() any {
	c := conf.CreateNew()
	for _, op := range exprOptions() {
		op(c)
	}
	for name := range c.Disabled {
		delete(c.Builtins, name)
	}
	c.Check()
	return c
}}

// compileExpr is expr.Compile with a pooled configuration.
func compileExpr(code string, maxNodes uint) (*vm.Program, error) {
	c := exprConfigs.Get().(*conf.Config)
	defer exprConfigs.Put(c)
	c.MaxNodes = maxNodes
	tree, err := checker.ParseCheck(code, c)
	if err != nil {
		return nil, err
	}
	if err := optimizer.Optimize(&tree.Node, c); err != nil {
		return nil, err
	}
	return exprcompiler.Compile(tree, c)
}

// Compile reads a predicate and compiles it into an expr program. Every
// error that can be found before running is found here — syntax, unknown
// symbols and functions, wrong numbers of arguments, invalid regexes — as a
// *[CompileError] with the line, the column and a caret snippet.
func Compile(src string, opts ...Option) (*Predicate, error) {
	cfg := config{timeout: time.Second, maxNodes: 10_000, memory: 1_000_000}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.memory == 0 {
		cfg.memory = conf.DefaultMemoryBudget // as expr's VM does
	}
	forms, err := read(src)
	if err != nil {
		return nil, err
	}
	switch len(forms) {
	case 0:
		return nil, newCompileError(src, 0, "empty predicate: write one form, e.g. (map? data/result)")
	case 1:
	default:
		return nil, newCompileError(src, forms[1].pos, "a predicate is one form, but another follows the first; wrap them in (and ...)")
	}
	c := &compiler{src: src}
	typ, err := c.emit(forms[0])
	if err != nil {
		return nil, err
	}
	p := &Predicate{src: src, code: c.b.String(), spans: c.spans, consts: c.consts, typ: typ, cfg: cfg}
	p.program, err = compileExpr(p.code, cfg.maxNodes)
	if err != nil {
		if strings.Contains(err.Error(), "exceeds maximum allowed nodes") {
			return nil, newCompileError(src, 0, fmt.Sprintf("predicate too large: over %d nodes", cfg.maxNodes))
		}
		return nil, fmt.Errorf("verify: internal error: %q compiled to %q: %w", src, p.code, err)
	}
	return p, nil
}

// compiler writes the expr source of a form.
type compiler struct {
	src    string
	b      strings.Builder
	spans  []span
	consts []any
	scopes []map[string]string // let and fn bindings: symbol → identifier
	names  int                 // identifiers made so far
}

func (c *compiler) errorf(f form, format string, args ...any) error {
	return newCompileError(c.src, f.pos, fmt.Sprintf(format, args...))
}

func (c *compiler) text(f form) string { return c.src[f.pos:f.end] }

func (c *compiler) w(s ...string) {
	for _, x := range s {
		c.b.WriteString(x)
	}
}

// emit writes the code of f and returns what it may evaluate to.
func (c *compiler) emit(f form) (vtype, error) {
	start := c.b.Len()
	t, err := c.emitForm(f)
	if err == nil {
		c.spans = append(c.spans, span{start, c.b.Len(), f})
	}
	return t, err
}

// cond writes f as a bool: Clojure's truth, only nil and false are false.
func (c *compiler) cond(f form) error {
	start := c.b.Len()
	t, err := c.emit(f)
	if err == nil && t != tBool {
		c.wrap(start, "f_T(", ")")
	}
	return err
}

// wrap surrounds the code written since start with prefix and suffix,
// moving the spans recorded in it.
func (c *compiler) wrap(start int, prefix, suffix string) {
	code := c.b.String()
	c.b.Reset()
	c.w(code[:start], prefix, code[start:], suffix)
	for i := range c.spans {
		if c.spans[i].start >= start {
			c.spans[i].start += len(prefix)
			c.spans[i].end += len(prefix)
		}
	}
}

// check compiles f for its errors only: the code is dropped. Forms whose
// value is unused (all but the last of a body) are checked this way.
func (c *compiler) check(f form) error {
	start, spans := c.b.Len(), len(c.spans)
	_, err := c.emit(f)
	code := c.b.String()[:start]
	c.b.Reset()
	c.b.WriteString(code)
	c.spans = c.spans[:spans]
	return err
}

func (c *compiler) constant(v any) {
	c.w("_k[", strconv.Itoa(len(c.consts)), "]")
	c.consts = append(c.consts, v)
}

func (c *compiler) emitForm(f form) (vtype, error) {
	switch f.kind {
	case kNil:
		c.w("nil")
		return tNil, nil
	case kBool:
		c.w(strconv.FormatBool(f.b))
		return tBool, nil
	case kInt:
		if f.i == math.MinInt64 {
			// expr reads -9223372036854775808 as the negation of a literal
			// that overflows.
			c.constant(f.i)
			return tNum, nil
		}
		c.w("(", strconv.FormatInt(f.i, 10), ")")
		return tNum, nil
	case kFloat:
		s := strconv.FormatFloat(f.f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		c.w("(", s, ")")
		return tNum, nil
	case kBigInt:
		// Not tNum: expr would compare it as a string, or not at all.
		c.constant(json.Number(f.s))
		return tAny, nil
	case kString:
		c.w(strconv.QuoteToASCII(f.s))
		return tStr, nil
	case kKeyword:
		c.constant(Keyword(f.s))
		return tKw, nil
	case kRegex:
		re, err := regexp.Compile(f.s)
		if err != nil {
			return 0, c.errorf(f, "invalid regex: %v", err)
		}
		c.constant(re)
		return tAny, nil
	case kVector:
		c.w("[")
		for i, item := range f.items {
			if i > 0 {
				c.w(", ")
			}
			if _, err := c.emit(item); err != nil {
				return 0, err
			}
		}
		c.w("]")
		return tVec, nil
	case kMap:
		return c.emitMap(f)
	case kSymbol:
		return c.emitSymbol(f)
	}
	return c.emitList(f)
}

func (c *compiler) emitMap(f form) (vtype, error) {
	c.w("{")
	seen := make(map[string]bool, len(f.items)/2)
	for i := 0; i < len(f.items); i += 2 {
		k := f.items[i]
		if k.kind != kString && k.kind != kKeyword {
			return 0, c.errorf(k, "map keys must be strings or keywords, found %s", c.text(k))
		}
		// :a and "a" are one key: keyword keys are stored by name.
		if seen[k.s] {
			return 0, c.errorf(k, "duplicate map key %s", c.text(k))
		}
		seen[k.s] = true
		if i > 0 {
			c.w(", ")
		}
		// Keyword keys are stored by name: maps from JSON have string keys.
		c.w(strconv.QuoteToASCII(k.s), ": ")
		if _, err := c.emit(f.items[i+1]); err != nil {
			return 0, err
		}
	}
	c.w("}")
	return tMap, nil
}

// dataBindings are the namespaced symbols a predicate reads its data from.
var dataBindings = map[string]string{"data/input": "input", "data/result": "result", "data/depends": "depends"}

func (c *compiler) emitSymbol(f form) (vtype, error) {
	if id, ok := dataBindings[f.s]; ok {
		c.w(id)
		return tAny, nil
	}
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if id, ok := c.scopes[i][f.s]; ok {
			c.w(id)
			return tAny, nil
		}
	}
	if _, ok := builtins[f.s]; ok || specialForms[f.s] != nil {
		return 0, c.errorf(f, "%s is a function, not a value: call it as (%s ...)", f.s, f.s)
	}
	return 0, c.errorf(f, "unknown symbol %s%s", f.s, suggestSymbol(f.s))
}

// bind opens a scope binding name to a fresh identifier.
func (c *compiler) bind(scope map[string]string, f form) (string, error) {
	if f.kind != kSymbol {
		return "", c.errorf(f, "a binding name must be a symbol, found %s", c.text(f))
	}
	if _, ok := dataBindings[f.s]; ok || strings.Contains(f.s, "/") {
		return "", c.errorf(f, "cannot bind %s: names with a namespace are reserved", f.s)
	}
	if specialForms[f.s] != nil {
		return "", c.errorf(f, "cannot bind %s: it is a special form", f.s)
	}
	c.names++
	id := "v" + strconv.Itoa(c.names)
	scope[f.s] = id
	return id, nil
}

func (c *compiler) emitList(f form) (vtype, error) {
	if len(f.items) == 0 {
		c.w("[]")
		return tVec, nil
	}
	if f.anon {
		return 0, c.errorf(f, "#( ) is a function: pass it to every?, some, filter or map")
	}
	head := f.items[0]
	args := f.items[1:]
	switch head.kind {
	case kKeyword:
		// (:k m) and (:k m default) look the keyword up.
		if len(args) < 1 || len(args) > 2 {
			return 0, c.errorf(f, "(%s m) takes a map and an optional default, found %d arguments", c.text(head), len(args))
		}
		call := form{kind: kList, pos: f.pos, end: f.end, items: append([]form{{kind: kSymbol, s: "get", pos: head.pos, end: head.end}, args[0], head}, args[1:]...)}
		return c.emitCall(call, builtins["get"])
	case kSymbol:
	default:
		return 0, c.errorf(head, "%s cannot be called: the first element of a list must be a function", c.text(head))
	}
	if c.bound(head.s) {
		return 0, c.errorf(head, "%s is a value, not a function", head.s)
	}
	if sf := specialForms[head.s]; sf != nil {
		return sf(c, f, args)
	}
	b, ok := builtins[head.s]
	if !ok {
		return 0, c.errorf(head, "unknown function %s%s", head.s, suggestFunction(head.s))
	}
	return c.emitCall(f, b)
}

func (c *compiler) bound(name string) bool {
	for _, s := range c.scopes {
		if _, ok := s[name]; ok {
			return true
		}
	}
	return false
}

func (c *compiler) arity(f form, name string, n, lo, hi int) error {
	switch {
	case n < lo && lo == hi:
		return c.errorf(f, "%s takes %d argument%s, found %d", name, lo, plural(lo), n)
	case n < lo:
		return c.errorf(f, "%s takes at least %d argument%s, found %d", name, lo, plural(lo), n)
	case hi >= 0 && n > hi && lo == hi:
		return c.errorf(f, "%s takes %d argument%s, found %d", name, hi, plural(hi), n)
	case hi >= 0 && n > hi:
		return c.errorf(f, "%s takes %d to %d arguments, found %d", name, lo, hi, n)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (c *compiler) emitCall(f form, b *builtin) (vtype, error) {
	name, args := f.items[0].s, f.items[1:]
	if err := c.arity(f, name, len(args), b.min, b.max); err != nil {
		return 0, err
	}
	if b.hof {
		return c.emitHOF(f, name, args)
	}
	if op, ok := nativeOps[name]; ok && len(args) == 2 {
		call := exprName(name) + "("
		if takesState(name) {
			call += "_st, "
		}
		return c.emitComparison(call, op, args)
	}
	c.w(exprName(name), "(")
	if takesState(name) {
		c.w("_st")
	}
	for i, a := range args {
		if i > 0 || takesState(name) {
			c.w(", ")
		}
		if _, err := c.emit(a); err != nil {
			return 0, err
		}
	}
	c.w(")")
	return b.ret, nil
}

// hofs are the higher-order functions that map onto an expr builtin
// directly; test says whether the function's result is read as a truth.
var hofs = map[string]struct {
	builtin string
	test    bool
	ret     vtype
}{
	"every?": {"all", true, tBool},
	"filter": {"filter", true, tVec},
	"map":    {"map", false, tVec},
}

// emitHOF writes every?, some, filter and map as expr's all, find, filter
// and map over f_seq, with the function inlined as a closure.
func (c *compiler) emitHOF(f form, name string, args []form) (vtype, error) {
	fn, coll := args[0], args[1]
	seq := func() error {
		c.w("f_seq(_st, ")
		if _, err := c.emit(coll); err != nil {
			return err
		}
		c.w("), ")
		return nil
	}
	var err error
	if h, ok := hofs[name]; ok {
		c.w(h.builtin, "(")
		if err = seq(); err == nil {
			err = c.closure(fn, name, h.test)
		}
		c.w(")")
		return h.ret, err
	}
	// some returns the first truthy result of the function, not a bool.
	c.w("find(map(")
	if err = seq(); err == nil {
		err = c.closure(fn, name, false)
	}
	c.w("), {f_T(#)})")
	return tAny, err
}

// closure writes the function argument of a higher-order function as an
// expr closure whose element is #: (fn [x] ...), #(... % ...), a keyword
// or the name of a one-argument function.
func (c *compiler) closure(fn form, hof string, asBool bool) error {
	var (
		param form
		body  []form // the last form is the value; the others are checked
	)
	switch {
	case fn.kind == kList && fn.anon:
		param = form{kind: kSymbol, s: "%", pos: fn.pos, end: fn.end}
		call := fn
		call.anon = false
		body = []form{call}
	case fn.kind == kList && len(fn.items) > 0 && fn.items[0].kind == kSymbol && fn.items[0].s == "fn":
		if len(fn.items) < 3 || fn.items[1].kind != kVector || len(fn.items[1].items) != 1 {
			return c.errorf(fn, "%s needs a function of one argument: (fn [x] body)", hof)
		}
		param, body = fn.items[1].items[0], fn.items[2:]
	case fn.kind == kKeyword:
		// every? and filter need a bool: the value found is tested for
		// truth, as Clojure does. f_tick counts each element, as a fn
		// body's does.
		c.w("{")
		if asBool {
			c.w("f_T(")
		}
		c.w("f_get(_st, f_tick(_st, #), ")
		c.constant(Keyword(fn.s))
		c.w(")")
		if asBool {
			c.w(")")
		}
		c.w("}")
		return nil
	case fn.kind == kSymbol && !c.bound(fn.s) && builtins[fn.s] != nil && !builtins[fn.s].hof && builtins[fn.s].min <= 1:
		call := exprName(fn.s) + "(f_tick(_st, #))"
		if takesState(fn.s) {
			call = exprName(fn.s) + "(_st, f_tick(_st, #))"
		}
		if asBool && builtins[fn.s].ret != tBool {
			call = "f_T(" + call + ")"
		}
		c.w("{", call, "}")
		return nil
	default:
		return c.errorf(fn, "%s needs a function as its first argument: (fn [x] ...), #(... %% ...), a keyword or a function name", hof)
	}
	scope := map[string]string{}
	id, err := c.bind(scope, param)
	if err != nil {
		return err
	}
	if param.s == "%" {
		scope["%1"] = id
	}
	c.scopes = append(c.scopes, scope)
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	for _, f := range body[:len(body)-1] {
		if err := c.check(f); err != nil {
			return err
		}
	}
	// f_tick checks the deadline as the body runs for each element: a body
	// may do much work without iterating itself, (sort xs) say.
	c.w("{let ", id, " = f_tick(_st, #); ")
	if asBool {
		err = c.cond(body[len(body)-1])
	} else {
		_, err = c.emit(body[len(body)-1])
	}
	c.w("}")
	return err
}

// nativeOps are the comparisons expr can do itself when both operands are
// numbers: its == and ordering agree with the language's there.
var nativeOps = map[string]string{"=": "==", "not=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}

// emitComparison writes a two-operand comparison as an expr operator when
// both operands are statically numbers, which spares a function call on the
// most common predicates, (> (count x) 0), and otherwise as a call that
// starts with call, "f_eq(_st, " say.
// Each operand is compiled once: compiling them again for the call would
// take time exponential in the nesting of comparisons.
func (c *compiler) emitComparison(call, op string, args []form) (vtype, error) {
	start, spans := c.b.Len(), len(c.spans)
	c.w("(")
	t1, err := c.emit(args[0])
	if err != nil {
		return 0, err
	}
	sep := c.b.Len()
	c.w(" ", op, " ")
	t2, err := c.emit(args[1])
	if err != nil {
		return 0, err
	}
	c.w(")")
	if t1 == tNum && t2 == tNum {
		return tBool, nil
	}
	// Rewrite "(a op b)" as call + "a, b)", moving the operands' spans.
	code := c.b.String()
	c.b.Reset()
	c.w(code[:start], call, code[start+1:sep], ", ", code[sep+len(op)+2:])
	shift1 := len(call) - 1
	shift2 := shift1 + len(", ") - len(op) - 2
	for i := spans; i < len(c.spans); i++ {
		d := shift1
		if c.spans[i].start >= sep {
			d = shift2
		}
		c.spans[i].start += d
		c.spans[i].end += d
	}
	return tBool, nil
}
