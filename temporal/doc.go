// Package temporal runs dagent plans on Temporal: a run is a workflow
// execution whose id is the run's id, each attempt of a task an activity
// on the caller's task queue, and the workflow's history the run's
// journal. It lives in a module of its own
// (github.com/dagent-dev/dagent/temporal), so that importers of dagent's
// core never link the Temporal SDK.
//
// # Same decisions as in process
//
// The workflow drives the runner's deterministic core ([runner.Core]),
// the code the in-process [runner.Runner] drives: the ready queue, phases,
// caps and priorities, when-conditions, request wiring, retries with the
// diagnosis as data, verification, output schemas, synthesis gates,
// reviews, the failure table. Predicates are evaluated in workflow code,
// with no wall-clock bound, so that a replay gives the same verdicts.
// Between plan versions it drives the executor's replanning rules
// ([executor.Replanning]). What blocks or touches the world is an
// activity, done by a worker with the host's trusted catalog and LLM
// ([Activities]):
//
//   - [ActivityCatalog]: the worker's catalog ([Catalog]), which the
//     workflow checks the plan against, deterministically.
//   - [ActivityAttempt]: one attempt of a task — preconditions, the call
//     under the attempt's timeout with heartbeats, the output normalised
//     and checked against the worker's declared outputs.
//   - [ActivityJudge]: the rubric judge; [ActivityRepair]: the planner's
//     repair of a failed tail, reviewed by the critic; [ActivityPlan]: the
//     planner's plan of the mission of a run started without a plan;
//     [ActivityRound]: the next round of a mission planned in rounds.
//
// A failure of an agent is a successful activity carrying a [Failure]
// (its class, text, report); the workflow rebuilds it as a [RemoteError],
// which [runner.Classify] classifies as the original, so the failure table
// decides alike in both places. Temporal retries an activity only when its
// worker was lost (a heartbeat or start-to-close timeout) or stopped
// before the attempt ended, on another worker with the same request and
// idempotency key, at most [MaxActivityAttempts] times; dagent's own
// retries are the task's policy.
// Backoffs are durable timers, cut short by a halt.
//
// The spec's LLM budget holds as in process: the workflow sums what each
// activity's LLM calls spent ([Spend]) and hands each attempt and
// judgement the budget and the run's spending so far ([Allowance]), which
// the worker's meter is charged with; an attempt of an LLM agent once the
// budget is spent fails in the workflow, with the error the run's meter
// gives in process, and starts no activity.
//
// # Reviews, queries, cancellation
//
// A run that reaches a human_review task ends its pass waiting; the
// workflow then waits for a decision on every pending review and goes
// on, as dagent resume does, with the outputs so far and the decisions.
// A decision is an [UpdateReview] ([Decide]): the run refuses, to its
// sender, one on a task that is not a human_review of its current plan or
// that is decided already, and never fails for it; one on a review not
// reached yet is kept for it. [QueryTasks] answers a [Snapshot] of the
// tasks ([Tasks]). A cancelled workflow ([Cancel]) ends its run failed,
// every finished task kept, and completes with that result.
//
// # Results
//
// The workflow's result is an [Outcome], in the JSON form dagent run
// --format json prints: a [runner.Result], or an [executor.Result] for a
// run that replans. [Result] waits for it.
//
// # Versions
//
// A repair's plan is data in the history, so runs of any plan replay.
// What must not change under a run in flight is the sequence of commands
// the workflow code issues for the same history; a change to the
// workflow or to the decisions of [runner.Core] that changes it must be
// guarded with workflow.GetVersion, and the recorded histories of
// testdata must still replay (TestReplayHistories).
package temporal
