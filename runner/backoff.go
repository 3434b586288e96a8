package runner

import (
	"time"

	"github.com/dagent-dev/dagent/backoff"
)

// Backoff spaces the retries of a task: see [backoff.Policy], the one
// retry policy of dagent, shaped like Temporal's. The zero Backoff retries
// at once.
type Backoff = backoff.Policy

// DefaultBackoff is the backoff of a runner without WithBackoff: 1s, 2s,
// 4s, ... up to 100s, with 20% jitter.
func DefaultBackoff() Backoff {
	return Backoff{Initial: time.Second, Coefficient: 2, Max: 100 * time.Second, Jitter: 0.2}
}
