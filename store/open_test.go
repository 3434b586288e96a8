package store_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store/sqlite"
)

// The journal's tests run against the embedded store: what they check is
// durable, as a crash would find it.

var ctx = context.Background()

// paths gives each test its database, the same for every open of the test.
var paths sync.Map // *testing.T → string

func dbPath(t *testing.T) string {
	p, _ := paths.LoadOrStore(t, filepath.Join(t.TempDir(), "dagent.db"))
	return p.(string)
}

func open(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(dbPath(t))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// checkIntegrity opens the test's database at the end of the test and
// runs SQLite's integrity check.
func checkIntegrity(t *testing.T) {
	path := dbPath(t)
	t.Cleanup(func() { // runs after the stores' cleanups: they close first
		s, err := sqlite.Open(path)
		require.NoError(t, err)
		defer s.Close()
		assert.NoError(t, s.Check(ctx))
	})
}
