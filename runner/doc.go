// Package runner executes one plan: the PlanRunner of dagent.
//
// A [Runner] runs a checked plan, the [plan.DAG] that [plan.Plan.DAG] or
// [Runner.Check] returns, reading its dependencies, reads and phases
// rather than deriving them again, under a concurrency limit, in one of
// two schedules: [Phased] (the default) runs each phase as an
// errgroup.Group limited to the concurrency, and starts phase k+1 when
// every task of phase k has settled; [Eager] starts a task as soon as its
// own dependencies have settled — the same semantics with a lower
// makespan.
//
// Each task runs on an [agent.Agent]: a Go agent given with [WithAgent], a
// worker of the trusted registry ([WithRegistry]), or an LLM sub-agent the
// plan defines, built by the factory given with [WithPlanAgents]. Before the agent
// runs, {{results.ID.path}} templates in the task's input are expanded and
// its inputs slots are wired from upstream outputs. After every successful
// attempt the task's verification predicate judges the output.
//
// Failures follow the task's on_failure policy and whether the task is
// critical:
//
//	on_failure   critical: true                   critical: false
//	stop         halt the run                     log and continue (skipped)
//	skip         log and continue (skipped)       log and continue (skipped)
//	retry        retry with the diagnosis,        retry with the diagnosis,
//	             then halt                        then skip
//	replan       end the run as replan_required, naming the task
//
// A verification verdict that fails follows on_verification_failure the same
// way; an execution error (or a predicate that errors) follows on_failure.
// Synthesis gates are checkpoints: when one fails, nothing downstream of it
// runs and the run fails (a critical gate under stop or retry also halts the
// rest, as the table says; a gate under replan asks for a replan instead).
// A run halted by a failure starts no new task and no new attempt: running
// attempts finish and their results are kept, and a task waiting to retry
// ends as if its retries were spent. A human_review task without a decision leaves the
// run waiting, with its pending review and every result so far; running the
// plan again with those results ([WithInitialResults]) and the decision
// ([WithReviews]) resumes it without re-running anything that is done.
//
// Every state change is an Event delivered, in order, to the observers;
// observers run on their own goroutines, so a slow one does not stall the
// scheduler, and Run returns once they have seen the last event.
//
// # The core and its drivers
//
// What a run decides is apart from how it runs. A [Core] holds the
// decisions — the ready queue, the phases, the priorities, the worker
// caps, each task's flow (its when condition, request, attempts and
// retries, verification, judge and failure policy), the settling, the
// gates, the halts and the result — and starts no goroutine, reads no
// clock and draws no random number: the time comes with each call, the
// cancellation from [CoreConfig.Cancelled], and everything a task does
// that blocks or touches the world (its attempts, the judge, the wait
// before a retry) from a [Host]. The Runner is one driver of it: workers
// in an errgroup.Group per phase, a watchdog that enforces the attempts'
// deadlines, the journal and the observers. A durable workflow can be
// another, with the attempts as activities and the waits as timers: built
// with [NewCore] for the same plan, a Core settles every task as the
// Runner does and emits the same task and phase events.
package runner
