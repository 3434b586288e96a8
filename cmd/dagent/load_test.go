package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endless is an input that never ends, and counts what was read of it.
func TestOversizePlan(t *testing.T) {
	defer func(n int64) { maxPlanBytes = n }(maxPlanBytes)
	maxPlanBytes = 16
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	plan := `{"tasks": ["a", "b"]}`
	require.NoError(t, os.WriteFile(file, []byte(plan), 0o600))

	code, stdout, stderr := dagent(t, plan, "fmt", "-")
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "plan: the plan on standard input is more than 16 bytes, over the limit of 16 [plan_too_large]\n", stderr)

	code, _, stderr = dagent(t, "", "fmt", file)
	assert.Equal(t, exitInvalid, code)
	assert.Equal(t, "plan: the plan is 21 bytes, over the limit of 16 [plan_too_large]\n", stderr)

	code, _, stderr = dagent(t, "", "lint", file)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "dagent: read plan: "+file+" is 21 bytes, over the limit of 16\n", stderr)
}
