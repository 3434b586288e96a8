package sqlite_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dagent-dev/dagent/internal/plantest"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// BenchmarkCreateRun measures creating a run with its plan on a SQLite
// file: a no-op layered plan of 1,000 and 10,000 tasks, which the store
// counts, or whose tasks the caller counted (counted).
func BenchmarkCreateRun(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		for _, counted := range []bool{false, true} {
			name := strconv.Itoa(n)
			if counted {
				name += "/counted"
			}
			b.Run(name, func(b *testing.B) {
				s, canon := benchStore(b, n)
				r := store.Run{Plan: canon}
				if counted {
					r.TaskCount = n
				}
				i := 0
				for b.Loop() {
					r.ID = "r" + strconv.Itoa(i)
					if err := s.CreateRun(ctx, r); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkSetStatus measures changing the status of a run created with a
// plan of 1,000 and 10,000 tasks on a SQLite file.
func BenchmarkSetStatus(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s, canon := benchStore(b, n)
			if err := s.CreateRun(ctx, store.Run{ID: "r", Plan: canon}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := s.SetStatus(ctx, "r", "running", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchStore opens a SQLite store in the benchmark's directory and returns
// it with the canonical JSON of a no-op layered plan of n tasks.
func benchStore(b *testing.B, n int) (*sqlite.Store, []byte) {
	b.Helper()
	canon, err := plantest.Layered(10, n/10, "noop").Canonical()
	if err != nil {
		b.Fatal(err)
	}
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "dagent.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, canon
}
