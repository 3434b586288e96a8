package runner

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff spaces the retries of a task, shaped like Temporal's retry
// policy: the n-th retry waits Initial × Coefficient^(n-1), capped at Max,
// less a random fraction up to Jitter so that retries of parallel tasks do
// not fall in step.
type Backoff struct {
	// Initial is the wait before the first retry; zero retries at once.
	Initial time.Duration
	// Coefficient multiplies the wait after each retry; below 1 counts as 1.
	Coefficient float64
	// Max caps the wait; zero means no cap.
	Max time.Duration
	// Jitter is the largest fraction of the wait taken off at random, in
	// [0, 1].
	Jitter float64
}

// DefaultBackoff is the backoff of a runner without WithBackoff: 1s, 2s,
// 4s, ... up to 100s, with 20% jitter.
func DefaultBackoff() Backoff {
	return Backoff{Initial: time.Second, Coefficient: 2, Max: 100 * time.Second, Jitter: 0.2}
}

// Delay is the wait before retry n (counting from 1).
func (b Backoff) Delay(n int) time.Duration {
	if b.Initial <= 0 || n < 1 {
		return 0
	}
	d := float64(b.Initial) * math.Pow(max(b.Coefficient, 1), float64(n-1))
	if b.Max > 0 {
		d = min(d, float64(b.Max))
	}
	d = min(d, math.MaxInt64/2)
	if j := min(max(b.Jitter, 0), 1); j > 0 {
		d -= d * j * rand.Float64()
	}
	return time.Duration(d)
}
