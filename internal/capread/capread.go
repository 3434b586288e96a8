// Package capread reads an input named on a command line — a file, or
// standard input for "-" — up to a limit, so that an oversize input costs
// no more memory than the limit: a regular file over it is refused by its
// size before a byte of it is read, and standard input is not read past it.
package capread

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Stdin is the path that stands for standard input.
const Stdin = "-"

// TooLargeError is an input over the limit of what is read of it.
type TooLargeError struct {
	// What names the input, as in "plan" or "initial results".
	What string
	// Name is the file's path, or "standard input".
	Name string
	// Size is the file's size; -1 when unknown, since standard input is
	// not read past the limit.
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("read %s: %s holds more than %d bytes, the limit", e.What, e.Name, e.Limit)
	}
	return fmt.Sprintf("read %s: %s is %d bytes, over the limit of %d", e.What, e.Name, e.Size, e.Limit)
}

// missingError is a file that does not exist; it matches os.ErrNotExist.
type missingError struct {
	what, path string
	err        error
}

func (e *missingError) Error() string {
	return fmt.Sprintf("read %s: %s does not exist", e.what, e.path)
}

func (e *missingError) Unwrap() error { return e.err }

// Read reads the file at path, or stdin for [Stdin]; what names the input
// in errors. Past limit bytes it stops with a [*TooLargeError]; a negative
// limit is none.
func Read(stdin io.Reader, path, what string, limit int64) ([]byte, error) {
	name, r := "standard input", stdin
	if path != Stdin {
		name = path
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, &missingError{what: what, path: path, err: err}
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && limit >= 0 && info.Size() > limit {
			return nil, &TooLargeError{What: what, Name: name, Size: info.Size(), Limit: limit}
		}
		r = f
	}
	if limit >= 0 {
		r = io.LimitReader(r, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		if path == Stdin {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return nil, err
	}
	if limit >= 0 && int64(len(data)) > limit {
		return nil, &TooLargeError{What: what, Name: name, Size: -1, Limit: limit}
	}
	return data, nil
}
