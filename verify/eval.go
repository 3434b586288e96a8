package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// Bindings are the data a predicate judges.
type Bindings struct {
	// Input is the task's input: data/input.
	Input any
	// Result is the task's output: data/result.
	Result any
	// Depends holds the outputs of the task's direct dependencies by task
	// id: data/depends.
	Depends map[string]any
}

// Verdict is what a predicate decided.
type Verdict struct {
	Passed bool
	// Diagnosis says why the output failed; empty when it passed.
	Diagnosis string
}

// state is what the iterating functions consult to stop a long evaluation.
type state struct {
	ctx      context.Context
	cfg      *config // the timeout, the step and the memory budgets
	deadline time.Time
	ticks    uint32
	// steps is the work done so far, counted against the step budget.
	steps uint64
	// used is how much of the memory budget the text that str and distinct
	// build has taken, one unit per 64 bytes. expr counts what it allocates
	// itself on its own.
	used uint
}

// errMemory is the error of an evaluation that outgrew its memory budget,
// worded as expr words its own.
var errMemory = errors.New("memory budget exceeded")

// tick is check for the functions that run once per element: it counts
// one step, and looks at the clock and the context every 64 calls only. A
// nil state never stops.
func (s *state) tick() error { return s.step(1) }

// step counts n steps of work against the step budget, and looks at the
// clock and the context every 64 calls. It fails once the budget is spent:
// the count, unlike the clock, is the same on every machine and every run.
func (s *state) step(n int) error {
	if s == nil {
		return nil
	}
	s.steps += uint64(max(n, 0))
	if s.cfg.maxSteps > 0 && s.steps > s.cfg.maxSteps {
		return ErrStepLimit
	}
	s.ticks++
	if s.ticks%64 != 0 {
		return nil
	}
	return s.check()
}

// room fails when n more bytes of text would exceed the memory budget.
func (s *state) room(n int) error {
	if s != nil && uint(n/64) >= s.cfg.memory-s.used {
		return errMemory
	}
	return nil
}

// charge counts n bytes of text built against the memory budget.
func (s *state) charge(n int) error {
	if err := s.room(n); err != nil {
		return err
	}
	if s != nil {
		s.used += uint(n/64) + 1
	}
	return nil
}

// check stops an evaluation whose context is done or whose time is up.
// The clock starts at the first check: only iteration can take long, and
// reading the clock on every Eval would cost more than most predicates.
func (s *state) check() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.cfg.timeout <= 0 {
		return nil
	}
	now := time.Now()
	if s.deadline.IsZero() {
		s.deadline = now.Add(s.cfg.timeout)
	}
	if now.After(s.deadline) {
		return ErrTimeout
	}
	return nil
}

// Eval runs the predicate on b. A predicate that returns true passes; a
// string fails with that string as the diagnosis; false fails with a
// diagnosis quoting the predicate; anything else fails with a diagnosis
// saying what it returned. An error means the predicate could not decide —
// a *[RuntimeError], which matches [ErrTimeout] or the context's error when it
// ran out of time, and [ErrStepLimit] too when it ran out of steps — and is
// distinct from a failed verdict.
//
// Eval has no I/O, clock or randomness the predicate can reach, so the same
// bindings always give the same verdict.
func (p *Predicate) Eval(ctx context.Context, b Bindings) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return Verdict{}, &RuntimeError{Err: err}
	}
	ev := evaluations.Get().(*evaluation)
	defer evaluations.Put(ev)
	ev.state = state{ctx: ctx, cfg: &p.cfg}
	ev.env = env{Input: normalize(b.Input), Result: normalize(b.Result), K: p.consts, St: &ev.state}
	if b.Depends != nil {
		ev.env.Depends = b.Depends
	}
	ev.vm.MemoryBudget = p.cfg.memory
	out, err := ev.vm.Run(p.program, &ev.env)
	// Drop the references to the caller's data before the pool keeps them.
	ev.env, ev.state = env{}, state{}
	clear(ev.vm.Variables)
	clear(ev.vm.Stack)
	if err != nil {
		return Verdict{}, p.runtimeError(err)
	}
	return p.verdict(out), nil
}

// evaluation is what one Eval needs; they are pooled, so that evaluating
// costs about what running the expr program costs.
type evaluation struct {
	vm    vm.VM
	env   env
	state state
}

var evaluations = sync.Pool{New: func() any { return new(evaluation) }}

func (p *Predicate) verdict(out any) Verdict {
	switch v := out.(type) {
	case bool:
		if v {
			return Verdict{Passed: true}
		}
		return Verdict{Diagnosis: "predicate returned false: " + p.src}
	case string:
		if v == "" {
			// A failed verdict always says why.
			return Verdict{Diagnosis: "predicate returned an empty diagnosis string: " + p.src}
		}
		return Verdict{Diagnosis: v}
	}
	return Verdict{Diagnosis: fmt.Sprintf("predicate returned %s; a predicate must return true, false or a diagnosis string: %s", describe(out), p.src)}
}

// runtimeError names the innermost form whose code the failure lies in.
func (p *Predicate) runtimeError(err error) error {
	re := &RuntimeError{Err: err}
	var fe *file.Error
	if errors.As(err, &fe) {
		re.Err = errors.New(fe.Message)
		if inner := errors.Unwrap(fe); inner != nil {
			re.Err = inner
		}
		best := -1
		for i, s := range p.spans {
			if s.start <= fe.From && fe.From < s.end && (best < 0 || s.end-s.start < p.spans[best].end-p.spans[best].start) {
				best = i
			}
		}
		if best >= 0 {
			f := p.spans[best].form
			re.Form = p.src[f.pos:f.end]
			re.Pos = position(p.src, f.pos)
		}
	}
	return re
}
