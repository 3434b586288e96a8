package executor

import (
	"testing"

	"github.com/dagent-dev/dagent/internal/purity"
)

// TestReplanningIsPure holds the files of the Replanning to what a
// deterministic driver, such as a workflow, may run: no goroutine,
// channel, select, lock, clock or randomness, and no context or I/O
// either, as a driver hands it everything it decides on.
func TestReplanningIsPure(t *testing.T) {
	purity.Check(t, []string{"replanning.go", "replanning_rounds.go"}, "context", "os")
}
