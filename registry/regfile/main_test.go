package regfile

import (
	"testing"

	"github.com/dagent-dev/dagent/internal/testproc"
)

// The workers of some tests are the test binary itself (package testproc).
func TestMain(m *testing.M) { testproc.Main(m) }
