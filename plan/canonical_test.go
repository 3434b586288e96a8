package plan_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/plan"
)

// TestCanonicalGolden parses the lenient plans under testdata/canonical and
// compares their canonical form, what `dagent fmt` prints, with
// <name>.golden.
func TestCanonicalGolden(t *testing.T) {
	tests := []struct {
		name, about string
	}{
		{"when", "conditions under their aliases, trimmed, written as when after depends_on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "canonical", tt.name+".json"))
			require.NoError(t, err)
			p, err := plan.Parse(src)
			require.NoError(t, err)
			require.Empty(t, p.Unknown, tt.about)
			got, err := p.Canonical()
			require.NoError(t, err)
			golden.Check(t, filepath.Join("testdata", "canonical", tt.name+".golden"), got)
			again, err := plan.Parse(got)
			require.NoError(t, err)
			back, err := again.Canonical()
			require.NoError(t, err)
			require.Equal(t, string(got), string(back), "the canonical form is a fixed point")
		})
	}
}
