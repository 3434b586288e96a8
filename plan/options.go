package plan

// Limits protect the engine from hostile or runaway plans. A zero field takes
// its default from DefaultLimits; a negative field means no limit.
type Limits struct {
	// MaxPlanBytes bounds the document Parse reads. Default 64 MiB.
	MaxPlanBytes int
	// MaxTasks bounds the number of tasks. Default 10,000.
	MaxTasks int
	// MaxInputBytes bounds one task's input, and separately its
	// output_schema: both are sent to the agent. Default 1 MiB.
	MaxInputBytes int
	// MaxRetries bounds one task's max_retries. Default 100.
	MaxRetries int
}

// DefaultLimits returns the limits Parse and Validate apply unless told
// otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxPlanBytes:  64 << 20,
		MaxTasks:      10_000,
		MaxInputBytes: 1 << 20,
		MaxRetries:    100,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&l.MaxPlanBytes, d.MaxPlanBytes)
	fill(&l.MaxTasks, d.MaxTasks)
	fill(&l.MaxInputBytes, d.MaxInputBytes)
	fill(&l.MaxRetries, d.MaxRetries)
	return l
}

// exceeds reports whether n is over the limit max (negative: no limit).
func exceeds(n, max int) bool { return max >= 0 && n > max }

// Option configures Parse and Validate.
type Option func(*config)

type config struct {
	limits  Limits
	workers map[string]bool
	outputs map[string][]string // worker → declared output slots
}

func newConfig(opts []Option) config {
	c := config{limits: DefaultLimits()}
	for _, o := range opts {
		o(&c)
	}
	c.limits = c.limits.withDefaults()
	return c
}

// WithLimits replaces the default limits.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}

// WithWorkers names the registry workers tasks may use as their agent, in
// addition to the agents the plan defines and DefaultAgent.
func WithWorkers(names ...string) Option {
	return func(c *config) {
		if c.workers == nil {
			c.workers = make(map[string]bool, len(names))
		}
		for _, n := range names {
			c.workers[n] = true
		}
	}
}

// WithWorkerOutputs names a registry worker and the output slots it
// declares. Validate then checks that inputs wired from a task run by that
// worker read a declared slot: the first segment of the slot's path must be
// one of slots. Workers named only by WithWorkers are not checked.
func WithWorkerOutputs(worker string, slots ...string) Option {
	return func(c *config) {
		WithWorkers(worker)(c)
		if c.outputs == nil {
			c.outputs = make(map[string][]string)
		}
		c.outputs[worker] = slots
	}
}
