// Package executor runs a plan to the end: the PlanExecutor of dagent.
//
// [Execute] refuses a plan the critic finds critical issues in, runs it, and
// when the run asks for a replan — or a critical task fails and replanning
// is allowed — asks the meta-planner for a repair plan of the unfinished
// tail and runs that, keeping every result finished so far (siblings that
// finished in the same phase as the failure included): completed tasks are
// never run again.
//
// Replanning stops at its limits and halt conditions: a total
// and a per-task number of replans, the same task failing the same way
// twice, too many failed executions in a row without progress, a streak
// of tasks that passed only on a retry (flaky workers, which a new plan
// does not fix), a repair plan that grows too much beyond the first, and
// budgets of tokens, LLM calls and wall time. Every failure is classified
// (timeout, verification failed, invalid output, agent error, ...) and the
// class goes into the replan prompt and the result's history. An
// execution that halts ends failed, its error a *[HaltError].
//
// The executor owns its seams: the [Replanner] it asks for repairs, with
// its [Failure], [Trial] and [Repair]; the events it emits between its
// runs to the observers of [WithObserver]; the [Journal] it commits each
// plan to before the plan runs; and [WithHistory] and [WithInitialResults],
// which resume an execution where it stopped.
//
// The rules of replanning — what to do after each run, and after each
// answer of a planner — are a value, [Replanning], which holds no
// goroutine, clock or I/O: Execute drives one, and a host that runs each
// plan version its own way, as a durable workflow, drives another to take
// the same decisions.
package executor
