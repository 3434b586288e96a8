package runner

import (
	"testing"

	"github.com/dagent-dev/dagent/internal/purity"
)

// coreFiles hold the run's deterministic core and what it calls of the
// package: a durable workflow runs their code, which must do the same on
// every replay.
var coreFiles = []string{"core.go", "coretask.go", "coreapi.go", "input.go", "request.go", "limit.go"}

// TestCorePurity fails on what would make the core's code behave
// differently from one run to the next: goroutines, channels, selects,
// locks, randomness and the clock.
func TestCorePurity(t *testing.T) {
	purity.Check(t, coreFiles)
}
