package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// A page of the failed runs, newest first, with how many there are: the
// store reads the summaries of the page's runs only.
func ExampleSQLite_Runs() {
	dir, err := os.MkdirTemp("", "dagent-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := store.Open(filepath.Join(dir, "dagent.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 7 {
		id := fmt.Sprint("r", i)
		_ = s.CreateRun(ctx, store.Run{ID: id, Created: t0.Add(time.Duration(i) * time.Hour)})
		if i%2 == 0 {
			_ = s.SetStatus(ctx, id, "failed", "boom")
		}
	}
	page, total, err := s.Runs(ctx, store.RunQuery{Statuses: []string{"failed"}, Limit: 2, Offset: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range page {
		fmt.Println(r.ID, r.Status)
	}
	fmt.Println(total, "failed runs")
	// Output:
	// r4 failed
	// r2 failed
	// 4 failed runs
}
