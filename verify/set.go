package verify

import (
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Set compiles predicates once each, keyed by their source, so that every
// stage that judges one plan — a linter checking it, a runner evaluating
// it, the repairs of a replanning loop — shares one compilation of each
// distinct predicate. LLMs often give many tasks the same predicate, and
// compiling is most of the cost of checking a large plan.
//
// A Set is safe for concurrent use. The zero Set is an empty set that
// compiles with the default options; [NewSet] gives it options. A nil *Set
// is usable too and caches nothing: each call compiles afresh.
type Set struct {
	opts []Option
	mu   sync.Mutex
	m    map[string]*compiled
}

// compiled is one source's compilation, made once.
type compiled struct {
	once  sync.Once
	p     *Predicate
	err   error
	diags []Diagnostic
}

// NewSet returns an empty set whose predicates are compiled with opts.
func NewSet(opts ...Option) *Set {
	return &Set{opts: opts}
}

// Compile returns src compiled, as [Compile] does, compiling it only the
// first time the set sees it. The predicate and the error are shared by
// every caller.
func (s *Set) Compile(src string) (*Predicate, error) {
	c := s.get(src)
	return c.p, c.err
}

// Check returns what [Check] finds in src, from the set's one compilation
// of it.
func (s *Set) Check(src string) []Diagnostic {
	return s.get(src).diags
}

// CompileAll compiles every source of srcs the set has not seen, spread
// over GOMAXPROCS goroutines, and returns when all are compiled. Their
// errors are left for [Compile] and [Check] to report.
func (s *Set) CompileAll(srcs []string) {
	// Plans repeat predicates: only the sources new to the set, each once,
	// get a goroutine.
	var todo []string
	if s == nil {
		todo = srcs
	} else {
		s.mu.Lock()
		for _, src := range srcs {
			if _, ok := s.m[src]; !ok {
				if s.m == nil {
					s.m = make(map[string]*compiled)
				}
				s.m[src] = &compiled{}
				todo = append(todo, src)
			}
		}
		s.mu.Unlock()
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, src := range todo {
		g.Go(func() error {
			s.get(src)
			return nil
		})
	}
	_ = g.Wait() // the goroutines return no error
}

// Len returns the number of distinct sources the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *Set) get(src string) *compiled {
	if s == nil {
		c := &compiled{}
		c.compile(src, nil)
		return c
	}
	s.mu.Lock()
	c, ok := s.m[src]
	if !ok {
		if s.m == nil {
			s.m = make(map[string]*compiled)
		}
		c = &compiled{}
		s.m[src] = c
	}
	s.mu.Unlock()
	c.once.Do(func() { c.compile(src, s.opts) })
	return c
}

func (c *compiled) compile(src string, opts []Option) {
	c.p, c.err = Compile(src, opts...)
	c.diags = diagnose(c.p, c.err)
}
