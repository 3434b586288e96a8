package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endless is an input that never ends, and counts what was read of it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestReadStopsAtTheLimit(t *testing.T) {
	const limit = 1 << 20
	in := &endless{}
	_, err := read(in, "-", "plan", limit)
	var tl *tooLargeError
	require.True(t, errors.As(err, &tl), "err = %v", err)
	assert.Equal(t, "read plan: standard input holds more than 1048576 bytes, the limit", err.Error())
	assert.LessOrEqual(t, in.n, int64(2*limit), "read far past the limit")

	dir := t.TempDir()
	big := filepath.Join(dir, "results.json")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat(" ", limit+1)+"{}"), 0o600))
	_, err = read(nil, big, "initial results", limit)
	require.True(t, errors.As(err, &tl), "err = %v", err)
	assert.Equal(t, "read initial results: "+big+" is 1048579 bytes, over the limit of 1048576", err.Error())

	data, err := read(strings.NewReader("{}"), "-", "reviews", 2)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(data))
}

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
