package registry_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/registry"
)

func TestCheckProgram(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.txt"), []byte("x"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))

	r := registry.New()
	workers := map[string]registry.Worker{
		"on-path":        {Agent: &agent.Command{Argv: []string{"sh", "-c", "true"}}},
		"absolute":       {Agent: &agent.Command{Argv: []string{filepath.Join(dir, "run.sh")}}},
		"relative-dir":   {Agent: &agent.Command{Argv: []string{"./run.sh"}, Dir: dir}},
		"go-agent":       {Agent: agent.Func(nil)},
		"not-on-path":    {Agent: &agent.Command{Argv: []string{"dagent-no-such-program"}}},
		"missing-file":   {Agent: &agent.Command{Argv: []string{"./nope.sh"}, Dir: dir}},
		"not-executable": {Agent: &agent.Command{Argv: []string{"./data.txt"}, Dir: dir}},
		"directory":      {Agent: &agent.Command{Argv: []string{filepath.Join(dir, "sub")}}},
	}
	for name, w := range workers {
		require.NoError(t, r.Register(name, w))
	}
	tests := []struct {
		worker string
		want   string // "" for no error
	}{
		{"on-path", ""},
		{"absolute", ""},
		{"relative-dir", ""},
		{"go-agent", ""},
		{"no-such-worker", ""},
		{"not-on-path", `worker "not-on-path": program not found: exec: "dagent-no-such-program": executable file not found in $PATH`},
		{"missing-file", "no such file or directory"},
		{"not-executable", "permission denied"},
		{"directory", "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.worker, func(t *testing.T) {
			err := r.CheckProgram(tt.worker)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, registry.ErrNoProgram)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	var nilRegistry *registry.Registry
	assert.NoError(t, nilRegistry.CheckProgram("any"))
}

func TestCheckPrograms(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.Register("ok", registry.Worker{Agent: &agent.Command{Argv: []string{"sh"}}}))
	require.NoError(t, r.Register("b-missing", registry.Worker{Agent: &agent.Command{Argv: []string{"dagent-no-such-b"}}}))
	require.NoError(t, r.Register("a-missing", registry.Worker{Agent: &agent.Command{Argv: []string{"dagent-no-such-a"}}}))
	err := r.CheckPrograms()
	require.ErrorIs(t, err, registry.ErrNoProgram)
	assert.Equal(t, `worker "a-missing": program not found: exec: "dagent-no-such-a": executable file not found in $PATH
worker "b-missing": program not found: exec: "dagent-no-such-b": executable file not found in $PATH`, err.Error())

	var nilRegistry *registry.Registry
	assert.NoError(t, nilRegistry.CheckPrograms())
	assert.NoError(t, registry.New().CheckPrograms())
}
