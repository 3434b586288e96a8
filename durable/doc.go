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
// What a run needs from the process that runs it — never from the journal —
// comes in options: the catalog ([WithCatalog]), the LLM ([WithLLM]), Go
// workers ([WithAgent]) and observers ([WithObserver]).
package durable
