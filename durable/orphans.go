package durable

import (
	"context"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/store"
)

// recorded runs the agents of reg so that each program they start is
// recorded in jr's run before the attempt goes on.
func (jr *journal) recorded(reg *registry.Registry) *registry.Registry {
	return rebuild(reg, func(_ string, w registry.Worker) agent.Agent { return jr.recording(w.Agent) }, nil)
}

// recording runs a so that each program it starts, and each program the
// tools it calls start, is recorded with the attempt that started it.
func (jr *journal) recording(a agent.Agent) agent.Agent {
	return agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return a.Run(agent.WithProcessStart(ctx, func(pid int) { jr.started(ctx, req, pid) }), req)
	})
}

// started records that the attempt req started the program pid, in a
// process group of its own, durably: should this process die before the
// attempt settles, the resume of the run kills what is left of the group
// before it runs the task again. Where a group cannot be told apart from
// a later one of the same id, nothing is recorded.
func (jr *journal) started(ctx context.Context, req agent.Request, pid int) {
	p, ok := processOf(pid)
	if !ok {
		return
	}
	p.TaskID, p.Attempt, p.Key = req.TaskID, req.Attempt, req.IdempotencyKey
	jr.procs.Store(true)
	if err := jr.fs.RecordProcess(context.WithoutCancel(ctx), jr.runID, p); err != nil {
		jr.mu.Lock()
		if jr.procErr == nil {
			jr.procErr = err
		}
		jr.mu.Unlock()
	}
}

// killOrphans kills the process groups that the attempts of rec's tasks
// not done started, as far as they still run on this host since the same
// boot, and forgets every process of the run: it is called once the
// process that ran them is known dead, before the run goes on.
func killOrphans(ctx context.Context, s store.Store, rec *store.Record, done map[string]any) error {
	if len(rec.Processes) == 0 {
		return nil
	}
	for _, p := range rec.Processes {
		if _, ok := done[p.TaskID]; !ok {
			killOrphan(p)
		}
	}
	return s.ForgetProcesses(ctx, rec.ID)
}
