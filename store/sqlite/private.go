package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// createPrivate creates the database file at path, and the directories
// above it that do not exist, readable and writable by their owner only
// (0600, 0700), whatever the umask: the journal holds the outputs of every
// task and the settings a run resumes with. SQLite gives its -wal and -shm
// files the database file's mode. An existing file or directory keeps its
// mode: the journal's owner may have shared it on purpose.
func createPrivate(path string) error {
	dir := filepath.Dir(path)
	if err := mkdirPrivate(dir); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// mkdirPrivate creates dir and the directories above it that do not
// exist, each 0700.
func mkdirPrivate(dir string) error {
	if _, err := os.Stat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirPrivate(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return os.Chmod(dir, 0o700)
}
