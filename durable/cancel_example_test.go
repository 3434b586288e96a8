package durable_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/store"
)

// Another process cancels a run: its owner, alive, is asked to stop it
// and does; a run that ended is refused.
func ExampleCancel() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	// The run as a live process of another host leaves it.
	_ = s.CreateRun(ctx, store.Run{ID: "r"})
	other := store.Owner{ID: "elsewhere", PID: 7, Host: "other-host", Heartbeat: time.Now()}
	_ = s.Acquire(ctx, "r", other, nil)

	owner, err := durable.Cancel(ctx, s, "r")
	fmt.Println(owner.Host, err)
	asked, _ := s.CancelRequested(ctx, "r", other)
	fmt.Println(asked)
	// The owner stops the run and gives it up.
	_ = s.SetStatus(ctx, "r", string(durable.StatusCancelled), "")
	_ = s.Release(ctx, "r", other)
	_, err = durable.Cancel(ctx, s, "r")
	fmt.Println(errors.Is(err, durable.ErrEnded))
	// Output:
	// other-host <nil>
	// true
	// true
}
