package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// The programs a run's attempts start are recorded as they start, so that
// whoever resumes the run after a crash finds what may be left of them,
// and forgotten once they are known to have ended.
func ExampleStore_RecordProcess() {
	dir, err := os.MkdirTemp("", "dagent-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "dagent.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	_ = s.CreateRun(ctx, store.Run{ID: "r"})

	fmt.Println(s.RecordProcess(ctx, "r", store.Process{TaskID: "fetch", Attempt: 1, Key: "r/fetch/1", PGID: 4242, Host: "a", Start: 1000}))
	rec, _ := s.Load(ctx, "r")
	for _, p := range rec.Processes {
		fmt.Println(p.Key, p.PGID, p.Host)
	}
	fmt.Println(s.ForgetProcesses(ctx, "r"))
	rec, _ = s.Load(ctx, "r")
	fmt.Println(len(rec.Processes))
	// Output:
	// <nil>
	// r/fetch/1 4242 a
	// <nil>
	// 0
}
