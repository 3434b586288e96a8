package runner

import (
	"errors"
	"fmt"
	"strings"
)

// MaxRunIDLength bounds the length, in bytes, of a run id a host names
// ([CheckRunID]).
const MaxRunIDLength = 128

// ErrInvalidRunID: a run id is empty, too long, or holds a character
// outside A-Z, a-z, 0-9, '.', '_', ':' and '-'.
var ErrInvalidRunID = errors.New("invalid run id")

// runIDChars are the characters of run ids: ids name runs on command
// lines, in file names, in idempotency keys and on terminals, where no
// other character is safe everywhere.
const runIDChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"

// CheckRunID checks a run id a host names, for [WithRunID] or a journal:
// not empty, at most [MaxRunIDLength] bytes, of the characters A-Z, a-z,
// 0-9, '.', '_', ':' and '-'. The error matches [ErrInvalidRunID] and says
// what is wrong. [Runner.Run] checks the characters of every id it is
// given; the length is the host's to bound, so that the ids derived from
// a run id (such as an executor's "ID.k") may be a little longer.
func CheckRunID(id string) error {
	if err := checkRunIDChars(id); err != nil {
		return err
	}
	if len(id) > MaxRunIDLength {
		return fmt.Errorf("%w: the id is %d bytes, over the limit of %d", ErrInvalidRunID, len(id), MaxRunIDLength)
	}
	return nil
}

func checkRunIDChars(id string) error {
	if id == "" {
		return fmt.Errorf("%w: the id is empty", ErrInvalidRunID)
	}
	if i := strings.IndexFunc(id, func(r rune) bool { return !strings.ContainsRune(runIDChars, r) }); i >= 0 {
		return fmt.Errorf("%w: %q holds %q; use letters, digits and . _ : -", ErrInvalidRunID, id, []rune(id[i:])[0])
	}
	return nil
}
