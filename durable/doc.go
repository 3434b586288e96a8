// Package durable runs plans durably: every run is journaled in a
// [store.Store], and a run the journal holds can be resumed where it
// stopped — after a crash, a cancellation or a wait for review, replanning
// runs included — or replayed without side effects.
//
// A run starts from a [Spec]: the plan (or the mission to plan first), the
// name of the catalog it runs on, the runner's settings, the replan limits
// and the budgets. The spec is journaled with the run as a versioned JSON
// document, so that any process that can open the store and resolve the
// catalog can go on with the run. [Start] runs a spec, [Resume] continues a
// journaled run, [Replay] runs it again against the journal and reports
// how it diverged, and [Load] reads a journaled run as task views for
// display.
//
// One process at a time runs a run: it holds the run's lease in the store
// while the run runs, and beats a heartbeat into it. [Resume] refuses a run
// whose owner is [Alive], and takes over one whose owner died. [Cancel]
// stops a run from any process: its owner sees the request in the store.
//
// The journal is inspected through the same package, so that a command, a
// server or any importer shows runs alike. [List] pages the runs by the
// status they are shown with ([Run.Shown]: a running run whose process
// died is [StatusInterrupted]); [Run.Document] is a run as one JSON
// document, [Run.Task] one task in detail — its input as the run gave it,
// its upstream outputs, its events — and [Run.Reviews] the reviews a
// waiting run waits for. [Watch] passes on a run's events as they are
// journaled, until it stops; [Prune] deletes the runs that ended before a
// time; [AwaitStop] waits for a run [Cancel] asked to stop.
//
// What a run needs from the process that runs it — never from the journal —
// comes in options: the catalog ([WithCatalog]), the LLM ([WithLLM]), Go
// workers ([WithAgent]) and observers ([WithObserver]).
package durable
