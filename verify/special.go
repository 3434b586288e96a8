package verify

// specialForms compile the forms that are not function calls.
var specialForms map[string]func(c *compiler, f form, args []form) (vtype, error)

func init() {
	specialForms = map[string]func(c *compiler, f form, args []form) (vtype, error){
		"if":   emitIf,
		"when": emitWhen,
		"cond": emitCond,
		"let":  emitLet,
		"and":  emitAndOr("and", " && ", "true"),
		"or":   emitAndOr("or", " || ", "false"),
		"not":  emitNot,
		"do":   emitDo,
		"->":   emitThread("->", false),
		"->>":  emitThread("->>", true),
		"fn": func(c *compiler, f form, _ []form) (vtype, error) {
			return 0, c.errorf(f, "fn is a function: pass it to every?, some, filter or map")
		},
	}
}

// ternary writes (test ? then : else). els writes the else branch; nil
// means nil.
func (c *compiler) ternary(test, then form, els func() (vtype, error)) (vtype, error) {
	c.w("(")
	if err := c.cond(test); err != nil {
		return 0, err
	}
	c.w(" ? ")
	t1, err := c.emit(then)
	if err != nil {
		return 0, err
	}
	c.w(" : ")
	t2 := tNil
	if els != nil {
		if t2, err = els(); err != nil {
			return 0, err
		}
	} else {
		c.w("nil")
	}
	c.w(")")
	return t1 | t2, nil
}

func emitIf(c *compiler, f form, args []form) (vtype, error) {
	if err := c.arity(f, "if", len(args), 2, 3); err != nil {
		return 0, err
	}
	if len(args) == 3 {
		return c.ternary(args[0], args[1], func() (vtype, error) { return c.emit(args[2]) })
	}
	return c.ternary(args[0], args[1], nil)
}

// emitBody checks every form of a body and writes the last, its value.
func (c *compiler) emitBody(body []form) (vtype, error) {
	for _, f := range body[:len(body)-1] {
		if err := c.check(f); err != nil {
			return 0, err
		}
	}
	return c.emit(body[len(body)-1])
}

func emitWhen(c *compiler, f form, args []form) (vtype, error) {
	if err := c.arity(f, "when", len(args), 2, -1); err != nil {
		return 0, err
	}
	for _, b := range args[1 : len(args)-1] {
		if err := c.check(b); err != nil {
			return 0, err
		}
	}
	return c.ternary(args[0], args[len(args)-1], nil)
}

func emitDo(c *compiler, f form, args []form) (vtype, error) {
	if len(args) == 0 {
		c.w("nil")
		return tNil, nil
	}
	return c.emitBody(args)
}

// emitCond writes (cond t1 e1 t2 e2 :else e) as nested ternaries. A
// keyword or true as a test always holds.
func emitCond(c *compiler, f form, args []form) (vtype, error) {
	if len(args)%2 != 0 {
		return 0, c.errorf(f, "cond takes test/expression pairs, found an odd number of forms")
	}
	if len(args) == 0 {
		c.w("nil")
		return tNil, nil
	}
	test, then := args[0], args[1]
	if test.kind == kKeyword || test.kind == kBool && test.b {
		for _, rest := range args[2:] {
			if err := c.check(rest); err != nil {
				return 0, err
			}
		}
		return c.emit(then)
	}
	rest := form{kind: kList, pos: f.pos, end: f.end, items: append([]form{f.items[0]}, args[2:]...)}
	return c.ternary(test, then, func() (vtype, error) { return emitCond(c, rest, args[2:]) })
}

// emitLet writes (let [a 1 b 2] body) as expr's (let v1 = 1; let v2 = 2;
// body). Each binding sees the ones before it.
func emitLet(c *compiler, f form, args []form) (vtype, error) {
	if len(args) < 2 || args[0].kind != kVector {
		return 0, c.errorf(f, "let takes a vector of bindings and a body: (let [x 1] (+ x 1))")
	}
	bindings := args[0].items
	if len(bindings)%2 != 0 {
		return 0, c.errorf(args[0], "let bindings come in name/value pairs, found an odd number of forms")
	}
	scope := map[string]string{}
	c.scopes = append(c.scopes, scope)
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	c.w("(")
	for i := 0; i < len(bindings); i += 2 {
		// The value is compiled before the name is bound: (let [x (+ x 1)])
		// sees the outer x.
		start := c.b.Len()
		if _, err := c.emit(bindings[i+1]); err != nil {
			return 0, err
		}
		id, err := c.bind(scope, bindings[i])
		if err != nil {
			return 0, err
		}
		c.wrap(start, "let "+id+" = ", "; ")
	}
	t, err := c.emitBody(args[1:])
	c.w(")")
	return t, err
}

// emitAndOr writes and/or with Clojure's truth and short-circuit, but —
// deliberately unlike Clojure — returning booleans, so that
// (and (map? r) (get r "name")) is true rather than the name, which would
// read as a failure diagnosis.
func emitAndOr(name, op, empty string) func(c *compiler, f form, args []form) (vtype, error) {
	return func(c *compiler, f form, args []form) (vtype, error) {
		if len(args) == 0 {
			c.w(empty)
			return tBool, nil
		}
		c.w("(")
		for i, a := range args {
			if i > 0 {
				c.w(op)
			}
			if err := c.cond(a); err != nil {
				return 0, err
			}
		}
		c.w(")")
		return tBool, nil
	}
}

func emitNot(c *compiler, f form, args []form) (vtype, error) {
	if err := c.arity(f, "not", len(args), 1, 1); err != nil {
		return 0, err
	}
	c.w("!(")
	err := c.cond(args[0])
	c.w(")")
	return tBool, err
}

// emitThread rewrites (-> x (f a) g) into (g (f x a)), and ->> into
// (g (f a x)), then compiles that.
func emitThread(name string, last bool) func(c *compiler, f form, args []form) (vtype, error) {
	return func(c *compiler, f form, args []form) (vtype, error) {
		if len(args) == 0 {
			return 0, c.errorf(f, "%s needs a value to thread", name)
		}
		acc := args[0]
		for _, step := range args[1:] {
			var items []form
			switch {
			case step.kind == kList && !step.anon && len(step.items) > 0:
				items = append(items, step.items[0])
				if last {
					items = append(append(items, step.items[1:]...), acc)
				} else {
					items = append(append(items, acc), step.items[1:]...)
				}
			case step.kind == kSymbol || step.kind == kKeyword:
				items = []form{step, acc}
			default:
				return 0, c.errorf(step, "%s steps must be calls, function names or keywords, found %s", name, c.text(step))
			}
			acc = form{kind: kList, pos: step.pos, end: step.end, items: items}
		}
		return c.emit(acc)
	}
}
