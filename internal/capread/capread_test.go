package capread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	_, err := Read(in, "-", "plan", limit)
	var tl *TooLargeError
	require.True(t, errors.As(err, &tl), "err = %v", err)
	assert.Equal(t, "read plan: standard input holds more than 1048576 bytes, the limit", err.Error())
	assert.LessOrEqual(t, in.n, int64(2*limit), "read far past the limit")

	dir := t.TempDir()
	big := filepath.Join(dir, "results.json")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat(" ", limit+1)+"{}"), 0o600))
	_, err = Read(nil, big, "initial results", limit)
	require.True(t, errors.As(err, &tl), "err = %v", err)
	assert.Equal(t, "read initial results: "+big+" is 1048579 bytes, over the limit of 1048576", err.Error())

	data, err := Read(strings.NewReader("{}"), "-", "reviews", 2)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(data))
}

func TestReadMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "plan.json")
	_, err := Read(nil, missing, "plan", 10)
	assert.EqualError(t, err, "read plan: "+missing+" does not exist")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestReadNoLimit(t *testing.T) {
	data, err := Read(strings.NewReader("0123456789"), Stdin, "plan", -1)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(data))
}
