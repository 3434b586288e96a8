// Package backoff spaces retries: of a task by the runner, of a request
// to a model by the llm package. It is one small type on the standard
// library, so that any package can take it without taking another's
// dependencies.
package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// Policy spaces retries, shaped like Temporal's retry policy: retry n
// (counting from 1) waits Initial × Coefficient^(n-1), capped at Max, less
// a random fraction of it up to Jitter, so that the retries of parallel
// callers do not fall in step. The zero Policy retries at once.
type Policy struct {
	// Initial is the wait before the first retry; zero or less retries
	// at once.
	Initial time.Duration
	// Coefficient multiplies the wait after each retry; below 1 counts
	// as 1, a constant wait.
	Coefficient float64
	// Max caps the wait; zero or less means no cap.
	Max time.Duration
	// Jitter is the largest fraction of the wait taken off at random,
	// clamped to [0, 1]: 0.5 waits between half of the wait and all of it.
	Jitter float64
}

// Delay is the wait before retry n, counting from 1; zero for n < 1. It
// never overflows: a wait beyond the range of [time.Duration] is capped
// at half of it, nearly 150 years. Its jitter is random: it is
// DelayAt(n, rand.Float64()).
func (p Policy) Delay(n int) time.Duration {
	return p.DelayAt(n, rand.Float64())
}

// DelayAt is the wait before retry n, as [Policy.Delay], with u in [0, 1)
// choosing the jitter: the wait less u × Jitter of it. It is a pure
// function of its arguments, for callers that must compute the same wait
// again — a replayed workflow, say — from a u they derive themselves. A u
// outside [0, 1] is clamped to it.
func (p Policy) DelayAt(n int, u float64) time.Duration {
	if p.Initial <= 0 || n < 1 {
		return 0
	}
	d := float64(p.Initial) * math.Pow(max(p.Coefficient, 1), float64(n-1))
	if p.Max > 0 {
		d = min(d, float64(p.Max))
	}
	d = min(d, math.MaxInt64/2)
	if j := min(max(p.Jitter, 0), 1); j > 0 {
		d -= d * j * min(max(u, 0), 1)
	}
	return time.Duration(d)
}
