//go:build unix

package sqlite_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Mode().Perm()
}

// TestOpenCreatesPrivately checks that the journal, its -wal and -shm
// files and the directories Open creates are their owner's only, even
// under a umask that lets everyone read and write, and that Open does not
// change the mode of a directory or database that exists.
func TestOpenCreatesPrivately(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	path := filepath.Join(root, "a", ".dagent", "dagent.db")
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		assert.Equal(t, fs.FileMode(0o600), mode(t, p), p)
	}
	require.NoError(t, s.Close())
	assert.Equal(t, fs.FileMode(0o700), mode(t, filepath.Join(root, "a")))
	assert.Equal(t, fs.FileMode(0o700), mode(t, filepath.Dir(path)))
	assert.Equal(t, fs.FileMode(0o755), mode(t, root), "an existing directory keeps its mode")

	shared := filepath.Join(root, "shared.db")
	require.NoError(t, os.WriteFile(shared, nil, 0o640))
	s, err = sqlite.Open(shared)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Equal(t, fs.FileMode(0o640), mode(t, shared), "an existing journal keeps its mode")
}
