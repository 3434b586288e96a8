package durable_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/store"
)

// A run has one owner: a resume refuses a run another process owns while
// that process is alive, and takes over one whose process died — here, of
// another host, it has not been heard of for longer than the staleness
// window.
func ExampleAlive() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	p, _ := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "upper", "input": "once"}]}`))
	if _, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("upper", upper), durable.WithRunID("r")); err != nil {
		fmt.Println(err)
		return
	}
	// The run as a process of another host leaves it, heard of a second ago.
	other := store.Owner{ID: "elsewhere", PID: 7, Host: "other-host", Heartbeat: time.Now().Add(-time.Second)}
	_ = s.SetStatus(ctx, "r", store.StatusRunning, "")
	_ = s.Acquire(ctx, "r", other, nil)
	fmt.Println(durable.Alive(other, durable.DefaultStaleAfter), durable.Alive(other, 500*time.Millisecond))

	_, err := durable.Resume(ctx, s, "r", durable.WithAgent("upper", upper))
	var owned *store.OwnedError
	fmt.Println(errors.As(err, &owned), owned.Owner.Host)
	out, err := durable.Resume(ctx, s, "r", durable.WithAgent("upper", upper), durable.WithStaleAfter(500*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Status)
	// Output:
	// true false
	// true other-host
	// completed
}

// WithTakeover takes a run over from an owner that looks alive: one that
// hangs, or whose process id another program took.
func ExampleWithTakeover() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	p, _ := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "upper", "input": "once"}]}`))
	if _, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("upper", upper), durable.WithRunID("t")); err != nil {
		fmt.Println(err)
		return
	}
	// The run as a hung process on another host leaves it.
	_ = s.SetStatus(ctx, "t", store.StatusRunning, "")
	_ = s.Acquire(ctx, "t", store.Owner{ID: "hung", PID: 7, Host: "elsewhere"}, nil)

	_, err := durable.Resume(ctx, s, "t", durable.WithAgent("upper", upper))
	fmt.Println(errors.Is(err, store.ErrOwned))
	out, err := durable.Resume(ctx, s, "t", durable.WithAgent("upper", upper), durable.WithTakeover(), durable.WithStaleAfter(time.Minute))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Status)
	// Output:
	// true
	// completed
}
