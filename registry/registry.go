// Package registry holds the workers and tools a host trusts, by name: what
// a plan may name but never define. A [Worker] is an [agent.Agent] with a
// description, declared output slots, preconditions and a timeout; a [Tool]
// is a function of the host that LLM sub-agents may call. The registry's
// file format is in package [github.com/dagent-dev/dagent/registry/regfile].
package registry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/verify"
)

// ErrDuplicateWorker is matched by the error of [Registry.Register] when the name is
// taken: a worker is trusted configuration, and silently replacing one would
// change what a plan runs.
var ErrDuplicateWorker = errors.New("a worker of that name is already registered")

// ErrPrecondition is matched by the error of [Worker.Check] when a
// precondition does not pass or cannot be evaluated, so that the runner can
// fail the attempt without running the worker.
var ErrPrecondition = errors.New("precondition not met")

// Worker is a trusted implementation a plan may name as a task's agent,
// with what the planner and the linter need to know about it.
type Worker struct {
	// Description tells the planner what the worker does.
	Description string
	// Outputs are the slots the worker declares: the top-level keys of its
	// output object, which other tasks may wire as inputs.
	Outputs []string
	// Preconditions are predicates in dagent's Lisp (package [verify]) that
	// must pass before each attempt, with data/input bound to the rendered
	// input and data/depends to the outputs of the direct dependencies.
	Preconditions []string
	// Timeout bounds one attempt; zero leaves it to the runner.
	Timeout time.Duration
	// MaxConcurrency bounds the attempts of the worker that run at once in
	// one run, retries included, for a worker that calls a rate-limited
	// API or a site that must be hit one at a time; zero means no bound
	// but the runner's. Tasks that wait for the worker hold no place of
	// the runner's concurrency (see [github.com/dagent-dev/dagent/runner]).
	MaxConcurrency int
	// Agent does the work; [Registry.Register] refuses a worker without
	// one, so the zero Worker is not registrable.
	Agent agent.Agent

	name     string              // set by Register, for messages
	compiled []*verify.Predicate // Preconditions, compiled
}

// PreconditionError is a precondition that did not pass, or could not be
// evaluated. It matches [ErrPrecondition], so that callers need not tell the
// two apart to refuse the attempt; when the predicate could not be
// evaluated it unwraps to the *[verify.RuntimeError], or to the
// *[verify.CompileError] of a worker that was never registered.
type PreconditionError struct {
	// Worker names the worker.
	Worker string
	// Index counts the worker's preconditions from 1.
	Index int
	// Source is the precondition as written.
	Source string
	// Diagnosis says why the precondition did not pass; empty when it
	// could not be evaluated.
	Diagnosis string
	// Err is why the precondition could not be evaluated; nil when it ran
	// and did not pass.
	Err error
}

// Error names the worker, the precondition and why it did not pass, which
// the runner hands on as the attempt's diagnosis.
func (e *PreconditionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("precondition %d of worker %q could not be evaluated: %s: %v", e.Index, e.Worker, e.Source, e.Err)
	}
	return fmt.Sprintf("precondition %d of worker %q not met: %s: %s", e.Index, e.Worker, e.Source, e.Diagnosis)
}

// Is reports whether target is [ErrPrecondition].
func (e *PreconditionError) Is(target error) bool { return target == ErrPrecondition }

// Unwrap returns the evaluation error, if any.
func (e *PreconditionError) Unwrap() error { return e.Err }

// Check evaluates the worker's preconditions against the request, in order,
// so that a worker is not started on input it cannot handle. The first that
// does not pass is returned as a *[PreconditionError]; a done ctx is returned
// as ctx's error, since it says nothing about the input.
func (w Worker) Check(ctx context.Context, req agent.Request) error {
	name := w.name
	if name == "" {
		name = req.Agent
	}
	preds, i, err := w.predicates()
	if err != nil {
		return &PreconditionError{Worker: name, Index: i + 1, Source: w.Preconditions[i], Err: err}
	}
	b := verify.Bindings{Input: req.Input, Depends: req.Depends}
	for i, p := range preds {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("check the preconditions of worker %q: %w", name, err)
		}
		v, err := p.Eval(ctx, b)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return fmt.Errorf("check the preconditions of worker %q: %w", name, err)
			}
			return &PreconditionError{Worker: name, Index: i + 1, Source: p.Source(), Err: err}
		}
		if !v.Passed {
			// verify ends some diagnoses with the source, which the
			// message already quotes.
			diag := strings.TrimSuffix(v.Diagnosis, ": "+p.Source())
			return &PreconditionError{Worker: name, Index: i + 1, Source: p.Source(), Diagnosis: diag}
		}
	}
	return nil
}

// predicates returns the compiled preconditions, compiling them if the
// worker was not registered or its Preconditions were changed since. On
// error it returns the index of the precondition at fault.
func (w Worker) predicates() ([]*verify.Predicate, int, error) {
	if len(w.compiled) == len(w.Preconditions) {
		same := true
		for i, p := range w.compiled {
			if p.Source() != w.Preconditions[i] {
				same = false
				break
			}
		}
		if same {
			return w.compiled, 0, nil
		}
	}
	return compilePreconditions(w.Preconditions)
}

// compilePreconditions compiles srcs, returning the index of the first that
// does not compile.
func compilePreconditions(srcs []string) ([]*verify.Predicate, int, error) {
	if len(srcs) == 0 {
		return nil, 0, nil
	}
	preds := make([]*verify.Predicate, len(srcs))
	for i, src := range srcs {
		p, err := verify.Compile(src)
		if err != nil {
			return nil, i, err
		}
		preds[i] = p
	}
	return preds, 0, nil
}

// Registry holds the workers and tools the host trusts, by name. A plan can
// name them but never define one. It is safe for concurrent use. Its zero
// value is an empty registry, ready to use; a nil *Registry reads as an
// empty one and refuses registrations.
type Registry struct {
	mu      sync.RWMutex
	workers map[string]Worker
	tools   map[string]registeredTool
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{workers: make(map[string]Worker)}
}

// Register adds a worker under name. It checks what can be checked before a
// run — the name, the agent, the declared outputs, the timeout — and
// compiles the preconditions, so that a mistake in the host's configuration
// shows when it is loaded rather than in the middle of a run. The error for
// a precondition that does not compile wraps the *[verify.CompileError].
func (r *Registry) Register(name string, w Worker) error {
	if r == nil {
		return fmt.Errorf("register worker %q: the registry is nil; create it with registry.New", name)
	}
	if name == "" {
		return errors.New("register worker: the name is empty")
	}
	if w.Agent == nil {
		return fmt.Errorf("register worker %q: the agent is nil", name)
	}
	if w.Timeout < 0 {
		return fmt.Errorf("register worker %q: the timeout %s is negative", name, w.Timeout)
	}
	if w.MaxConcurrency < 0 {
		return fmt.Errorf("register worker %q: max concurrency %d is negative", name, w.MaxConcurrency)
	}
	seen := make(map[string]bool, len(w.Outputs))
	for i, o := range w.Outputs {
		if o == "" {
			return fmt.Errorf("register worker %q: output %d is empty", name, i+1)
		}
		if seen[o] {
			return fmt.Errorf("register worker %q: output %q is declared twice", name, o)
		}
		seen[o] = true
	}
	preds, i, err := w.predicates()
	if err != nil {
		return fmt.Errorf("register worker %q: precondition %d: %w", name, i+1, err)
	}
	w.Outputs = slices.Clone(w.Outputs)
	w.Preconditions = slices.Clone(w.Preconditions)
	w.name, w.compiled = name, preds

	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.workers[name]; ok {
		return fmt.Errorf("register worker %q: %w", name, ErrDuplicateWorker)
	}
	if r.workers == nil {
		r.workers = make(map[string]Worker)
	}
	r.workers[name] = w
	return nil
}

// Lookup returns the worker registered under name. The worker's slices are
// copies: changing them does not change the registry.
func (r *Registry) Lookup(name string) (Worker, bool) {
	if r == nil {
		return Worker{}, false
	}
	r.mu.RLock()
	w, ok := r.workers[name]
	r.mu.RUnlock()
	if !ok {
		return Worker{}, false
	}
	w.Outputs = slices.Clone(w.Outputs)
	w.Preconditions = slices.Clone(w.Preconditions)
	return w, true
}

// Names returns the names of the registered workers in sorted order, for
// plan validation and for telling a planner what it may use.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.workers))
}

// Outputs returns the output slots the worker declares, so that plan
// validation can check the inputs wired from its tasks; nil when it
// declares none or is not registered.
func (r *Registry) Outputs(name string) []string {
	w, ok := r.Lookup(name)
	if !ok {
		return nil
	}
	return w.Outputs
}

// WorkerOutputs reports whether a worker is registered under name, and the
// output slots it declares, nil when it declares none, so that plan
// validation can check agents and the inputs wired from their tasks in one
// look-up.
func (r *Registry) WorkerOutputs(name string) (slots []string, ok bool) {
	w, ok := r.Lookup(name)
	if len(w.Outputs) == 0 {
		return nil, ok
	}
	return w.Outputs, ok
}
