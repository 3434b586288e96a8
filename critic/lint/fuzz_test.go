package lint

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseConfig: whatever the text, ParseConfig returns a configuration
// or a positioned *ConfigError, never panics, and what it accepts, New
// accepts too — the file's checks and the code's are one set of rules.
func FuzzParseConfig(f *testing.F) {
	data, err := os.ReadFile("testdata/project/.dagent.yaml")
	require.NoError(f, err)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data, ConfigName)
		if err != nil {
			require.Nil(t, c)
			var ce *ConfigError
			require.True(t, errors.As(err, &ce), "%T: %v", err, err)
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.NotEmpty(t, ce.Msg)
			require.GreaterOrEqual(t, ce.Line, 0)
			require.GreaterOrEqual(t, ce.Column, 0)
			return
		}
		require.Equal(t, ConfigName, c.Path)
		_, err = New(Options{Settings: c.Lint})
		require.NoError(t, err, "accepted in a file, refused in code")
		for _, e := range c.Lint.Exclude {
			require.NotEmpty(t, e.Checks)
		}
	})
}
