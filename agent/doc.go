// Package agent defines what the runner calls to do a task's work.
//
// An [Agent] receives a [Request] — the task's rendered input, the outputs
// of its direct dependencies, its wired input slots, its params, the
// attempt number and, on a retry, the diagnosis of the previous attempt —
// and returns a [Result]. [Func] adapts a Go function; [Command] runs a
// program with the request as JSON on standard input and reads its JSON
// result from standard output. The trusted workers a plan may name are in
// package [github.com/dagent-dev/dagent/registry]; the LLM sub-agents a
// plan defines, which implement the same interface, are in package
// [github.com/dagent-dev/dagent/llmagent].
//
// Besides package [github.com/dagent-dev/dagent/llm], for [Usage], which
// needs no more, the package links only the standard library, so that
// whatever schedules or checks agents stays light.
package agent
