package durable

import (
	"context"
	"errors"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// ErrNoLLM: the run needs an LLM — a plan's LLM agent, the planner — and
// was given none ([WithLLM]).
var ErrNoLLM = errors.New("the run needs an LLM and has none")

// ClientFunc gives a run its LLM client when the run first needs one; a run
// whose tasks are all registry workers never asks. model is the spec's
// ([LLMSpec.Model]; empty: the client's default). modelNeeded says the
// requests will name no model, so that the client must have a default one.
// A run may ask more than once; the run meters and journals what it is
// given, so that the function may return the same client every time.
type ClientFunc func(model string, modelNeeded bool) (llm.Client, error)

// CatalogFunc resolves a spec's catalog name ([Spec.Catalog], never empty
// here) into the registry the run's plan is checked against and runs on,
// and the catalog's digest: a fingerprint of its content, such as
// "sha256:" and the SHA-256 of a registry file's bytes in hex.
//
// The name is kept in the journal, which is data and may be edited; the
// digest is how a run knows that it resumes on the catalog it started on.
// [Start] records the digest in the run's spec ([Spec.CatalogDigest]), and
// [Resume] and [Replay] refuse a catalog whose digest is another, or a run
// that recorded none, with [ErrCatalogChanged]. An empty digest is neither
// recorded nor compared: return one for a catalog that has no fingerprint,
// or that the user named for this resume or replay and so vouches for.
type CatalogFunc func(ctx context.Context, name string) (reg *registry.Registry, digest string, err error)

// Option configures [Start], [Resume] and [Replay].
type Option func(*config)

type config struct {
	llm       ClientFunc
	catalog   CatalogFunc
	agents    map[string]agent.Agent
	observers []runner.Observer
	reviews   map[string]runner.Decision
	reviewer  string
	initial   map[string]any
	runID     string
	rerun     bool
	cache     PlanCache
	memory    int // runs

	staleAfter time.Duration
	takeover   bool
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithLLM gives the run its LLM: the client of the planner and of the
// plan's LLM agents. Without it, a run that needs an LLM fails with
// [ErrNoLLM] before any task starts.
func WithLLM(f ClientFunc) Option {
	return func(c *config) { c.llm = f }
}

// WithCatalog resolves the spec's catalog name. Without it, a spec that
// names a catalog is an error.
func WithCatalog(f CatalogFunc) Option {
	return func(c *config) { c.catalog = f }
}

// WithAgent runs the tasks that name agent name on a, a Go worker of the
// host, ahead of the catalog; plans are checked knowing that the name is a
// worker.
func WithAgent(name string, a agent.Agent) Option {
	return func(c *config) {
		if c.agents == nil {
			c.agents = make(map[string]agent.Agent)
		}
		c.agents[name] = a
	}
}

// WithObserver gives o the run's events: the runner's, the executor's of
// a run that replans, and [EventPlanned].
func WithObserver(o runner.Observer) Option {
	return func(c *config) { c.observers = append(c.observers, o) }
}

// WithReviews gives the decisions of human reviews, by task id.
func WithReviews(decisions map[string]runner.Decision) Option {
	return func(c *config) { c.reviews = decisions }
}

// WithInitialResults starts a run with the outputs of tasks done already,
// by id: those tasks do not run, and the journal keeps the outputs as the
// results of tasks done in no attempt. [Start] only.
func WithInitialResults(outputs map[string]any) Option {
	return func(c *config) { c.initial = outputs }
}

// WithRunID names the run [Start] starts. A run of that id in the store
// with the same plan, which does not replan, is continued: the initial
// results it has done already are kept as they are. Default: a new id that
// sorts by start time. The id must pass [runner.CheckRunID]: letters,
// digits and . _ : -, at most [runner.MaxRunIDLength] bytes.
func WithRunID(id string) Option {
	return func(c *config) { c.runID = id }
}

// WithRerunWorkers makes [Replay] run the catalog's workers and tools and
// the Go workers for real, instead of answering them from the journal; the
// report counts the calls.
func WithRerunWorkers() Option {
	return func(c *config) { c.rerun = true }
}

// WithStaleAfter sets how long the owner of a run on another host may go
// without a heartbeat before [Resume] (or a [Start] that continues the
// run) takes it for dead; default [DefaultStaleAfter]. The process that
// runs the run beats every third of it.
func WithStaleAfter(d time.Duration) Option {
	return func(c *config) { c.staleAfter = d }
}

// WithTakeover makes [Resume] (or a [Start] that continues a run) take the
// run from its owner even when that owner looks alive ([Alive]): a process
// that hangs, or a process id taken by another program since its owner
// died. An owner still running stops at its next heartbeat, with
// [ErrLeaseLost]; until then both may run tasks.
func WithTakeover() Option {
	return func(c *config) { c.takeover = true }
}
