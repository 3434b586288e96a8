// Package agent defines what the runner calls to do a task's work, and the
// trusted registry of workers a plan may name.
//
// An Agent receives a Request — the task's rendered input, the outputs of
// its direct dependencies, its wired input slots, its params, the attempt
// number and, on a retry, the diagnosis of the previous attempt — and returns
// a Result. Func adapts a Go function; Command runs a program with the
// request as JSON on standard input and reads its JSON result from standard
// output. LLM sub-agents defined by a plan implement the same interface.
//
// A Registry holds the workers the host trusts, by name, with a description,
// the output slots they declare, preconditions and an implementation. A plan
// names workers; it can never define one. LoadRegistry reads a registry from
// a YAML or JSON file for the CLI.
package agent
