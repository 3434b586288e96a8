package registry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var okAgent = agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{Output: "ok"}, nil })

func TestRegisterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		worker Worker
		want   string
	}{
		{"", Worker{Agent: okAgent}, "register worker: the name is empty"},
		{"w", Worker{}, `register worker "w": the agent is nil`},
		{"w", Worker{Agent: okAgent, Timeout: -time.Second}, `register worker "w": the timeout -1s is negative`},
		{"w", Worker{Agent: okAgent, MaxConcurrency: -1}, `register worker "w": max concurrency -1 is negative`},
		{"w", Worker{Agent: okAgent, Outputs: []string{"a", ""}}, `register worker "w": output 2 is empty`},
		{"w", Worker{Agent: okAgent, Outputs: []string{"a", "b", "a"}}, `register worker "w": output "a" is declared twice`},
		{"w", Worker{Agent: okAgent, Preconditions: []string{"true", "(frob data/input)"}}, `register worker "w": precondition 2: 1:2: unknown function frob`},
		{"w", Worker{Agent: okAgent, Preconditions: []string{"true", "(and\n  (string? data/input)\n  (nope 1))"}}, `register worker "w": precondition 2: 3:4: unknown function nope`},
		{"w", Worker{Agent: okAgent, Preconditions: []string{""}}, `register worker "w": precondition 1: 1:1: empty predicate`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			err := New().Register(tt.name, tt.worker)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestRegisterCompileErrorPosition(t *testing.T) {
	t.Parallel()
	err := New().Register("w", Worker{Agent: okAgent, Preconditions: []string{"(and true\n  (nope 1))"}})
	var ce *verify.CompileError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, verify.Pos{Line: 2, Column: 4}, ce.Pos)
}

func TestRegisterDuplicate(t *testing.T) {
	t.Parallel()
	r := New()
	require.NoError(t, r.Register("w", Worker{Agent: okAgent, Description: "first"}))
	err := r.Register("w", Worker{Agent: okAgent, Description: "second"})
	require.ErrorIs(t, err, ErrDuplicateWorker)
	assert.EqualError(t, err, `register worker "w": a worker of that name is already registered`)
	w, ok := r.Lookup("w")
	require.True(t, ok)
	assert.Equal(t, "first", w.Description)
}

func TestRegistryLookup(t *testing.T) {
	t.Parallel()
	r := New()
	outputs := []string{"findings", "packages"}
	require.NoError(t, r.Register("vet", Worker{
		Description:   "runs go vet",
		Outputs:       outputs,
		Preconditions: []string{"(string? data/input)"},
		Timeout:       time.Minute,
		Agent:         okAgent,
	}))
	require.NoError(t, r.Register("a-first", Worker{Agent: okAgent}))
	require.NoError(t, r.Register("zed", Worker{Agent: okAgent}))

	outputs[0] = "changed by the caller"
	w, ok := r.Lookup("vet")
	require.True(t, ok)
	assert.Equal(t, "runs go vet", w.Description)
	assert.Equal(t, []string{"findings", "packages"}, w.Outputs)
	assert.Equal(t, []string{"(string? data/input)"}, w.Preconditions)
	assert.Equal(t, time.Minute, w.Timeout)
	res, err := w.Agent.Run(context.Background(), agent.Request{})
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Output)

	w.Outputs[0] = "changed by a lookup"
	assert.Equal(t, []string{"findings", "packages"}, r.Outputs("vet"))
	assert.Nil(t, r.Outputs("zed"))
	assert.Nil(t, r.Outputs("missing"))
	assert.Equal(t, []string{"a-first", "vet", "zed"}, r.Names())

	_, ok = r.Lookup("missing")
	assert.False(t, ok)
}

func TestNilRegistry(t *testing.T) {
	t.Parallel()
	var r *Registry
	_, ok := r.Lookup("x")
	assert.False(t, ok)
	assert.Nil(t, r.Names())
	assert.Nil(t, r.Outputs("x"))
	assert.ErrorContains(t, r.Register("x", Worker{Agent: okAgent}), "the registry is nil")
	assert.Nil(t, New().Names())
}

func TestZeroRegistry(t *testing.T) {
	t.Parallel()
	var r Registry
	require.NoError(t, r.Register("x", Worker{Agent: okAgent}))
	assert.Equal(t, []string{"x"}, r.Names())
}

func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	r := New()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_ = r.Register(string(rune('a'+i)), Worker{Agent: okAgent})
			_ = r.Names()
			_, _ = r.Lookup("a")
		})
	}
	wg.Wait()
	assert.Len(t, r.Names(), 20)
}

func TestWorkerCheck(t *testing.T) {
	t.Parallel()
	r := New()
	require.NoError(t, r.Register("w", Worker{Agent: okAgent, Preconditions: []string{
		`(string? data/input)`,
		`(if (> (count data/input) 3) true (str "input too short: " (count data/input) " characters"))`,
		`(some? (get data/depends "fetch"))`,
		`(> (get (get data/depends "fetch") "n") 0)`,
	}}))
	w, _ := r.Lookup("w")
	deps := map[string]any{"fetch": map[string]any{"n": 2}}
	tests := []struct {
		name    string
		req     agent.Request
		want    string // empty: passes
		runtime bool
	}{
		{"passes", agent.Request{Input: "long enough", Depends: deps}, "", false},
		{"diagnosis", agent.Request{Input: "ab", Depends: deps}, `precondition 2 of worker "w" not met: (if (> (count data/input) 3) true (str "input too short: " (count data/input) " characters")): input too short: 2 characters`, false},
		{"false", agent.Request{Input: "long enough"}, `precondition 3 of worker "w" not met: (some? (get data/depends "fetch")): predicate returned false`, false},
		{"runtime error", agent.Request{Input: "long enough", Depends: map[string]any{"fetch": map[string]any{}}}, `precondition 4 of worker "w" could not be evaluated: (> (get (get data/depends "fetch") "n") 0): 1:1: (> (get (get data/depends "fetch") "n") 0): `, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := w.Check(context.Background(), tt.req)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrPrecondition)
			assert.ErrorContains(t, err, tt.want)
			var pe *PreconditionError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "w", pe.Worker)
			var re *verify.RuntimeError
			assert.Equal(t, tt.runtime, errors.As(err, &re))
		})
	}
}

func TestWorkerCheckUnregistered(t *testing.T) {
	t.Parallel()
	// A worker that was never registered compiles its preconditions on
	// demand and takes its name from the request.
	w := Worker{Agent: okAgent, Preconditions: []string{`(= data/input "go")`}}
	require.NoError(t, w.Check(context.Background(), agent.Request{Agent: "adhoc", Input: "go"}))
	err := w.Check(context.Background(), agent.Request{Agent: "adhoc", Input: "stop"})
	require.ErrorIs(t, err, ErrPrecondition)
	assert.EqualError(t, err, `precondition 1 of worker "adhoc" not met: (= data/input "go"): predicate returned false`)

	w.Preconditions = []string{"(bad"}
	err = w.Check(context.Background(), agent.Request{Agent: "adhoc"})
	require.ErrorIs(t, err, ErrPrecondition)
	var ce *verify.CompileError
	require.ErrorAs(t, err, &ce)

	// Changing a looked-up worker's preconditions takes effect.
	r := New()
	require.NoError(t, r.Register("w", Worker{Agent: okAgent, Preconditions: []string{"true"}}))
	lw, _ := r.Lookup("w")
	require.NoError(t, lw.Check(context.Background(), agent.Request{}))
	lw.Preconditions[0] = "false"
	require.ErrorIs(t, lw.Check(context.Background(), agent.Request{}), ErrPrecondition)
	lw, _ = r.Lookup("w")
	require.NoError(t, lw.Check(context.Background(), agent.Request{}))
}

func TestWorkerCheckCancelled(t *testing.T) {
	t.Parallel()
	r := New()
	require.NoError(t, r.Register("w", Worker{Agent: okAgent, Preconditions: []string{"true"}}))
	w, _ := r.Lookup("w")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := w.Check(ctx, agent.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrPrecondition)
	assert.EqualError(t, err, `check the preconditions of worker "w": context canceled`)
}

func TestWorkerCheckNoPreconditions(t *testing.T) {
	t.Parallel()
	require.NoError(t, Worker{Agent: okAgent}.Check(context.Background(), agent.Request{}))
}

// TestRegistryIsACatalog: plan checking takes the registry as its catalog.
func TestRegistryIsACatalog(t *testing.T) {
	reg := New()
	noop := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, nil })
	require.NoError(t, reg.Register("search", Worker{Agent: noop, Outputs: []string{"items"}}))
	require.NoError(t, reg.Register("shell", Worker{Agent: noop}))

	p := &plan.Plan{Tasks: []plan.Task{plan.NewTask("find", "x"), plan.NewTask("run", "y"), plan.NewTask("use", "z")}}
	p.Tasks[0].Agent, p.Tasks[1].Agent, p.Tasks[2].Agent = "search", "shell", "shell"
	p.Tasks[2].DependsOn = []string{"find", "run"}
	p.Tasks[2].Inputs = map[string]plan.InputRef{"top": {From: "find", Slot: "items.0"}, "any": {From: "run", Slot: "whatever"}}
	require.NoError(t, p.Validate(plan.WithCatalog(reg)), "both workers are known; only search declares its slots")

	p.Tasks[2].Inputs["bad"] = plan.InputRef{From: "find", Slot: "count"}
	err := p.Validate(plan.WithCatalog(reg))
	var perr *plan.Error
	require.ErrorAs(t, err, &perr)
	require.Len(t, perr.Problems, 1)
	assert.Equal(t, plan.CodeUndeclaredSlot, perr.Problems[0].Code)
	var _ plan.Catalog = reg
}

func TestWorkerOutputs(t *testing.T) {
	t.Parallel()
	r := New()
	require.NoError(t, r.Register("slots", Worker{Agent: okAgent, Outputs: []string{"a", "b"}}))
	require.NoError(t, r.Register("plain", Worker{Agent: okAgent}))
	require.NoError(t, r.Register("empty", Worker{Agent: okAgent, Outputs: []string{}}))
	tests := []struct {
		name   string
		reg    *Registry
		worker string
		slots  []string
		ok     bool
	}{
		{"declared outputs", r, "slots", []string{"a", "b"}, true},
		{"no outputs", r, "plain", nil, true},
		{"empty outputs", r, "empty", nil, true},
		{"not registered", r, "nope", nil, false},
		{"nil registry", nil, "slots", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slots, ok := tt.reg.WorkerOutputs(tt.worker)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.slots, slots)
		})
	}

	slots, _ := r.WorkerOutputs("slots")
	slots[0] = "changed"
	again, _ := r.WorkerOutputs("slots")
	assert.Equal(t, []string{"a", "b"}, again, "the slots are a copy")
}
