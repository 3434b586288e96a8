package durable_test

import (
	"testing"

	"github.com/dagent-dev/dagent/internal/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }
