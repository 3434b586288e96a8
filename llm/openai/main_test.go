package openai

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// retry timer, an attempt or a recorder left running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
