// Package plan is dagent's model of a plan: agents plus tasks plus
// dependencies, as an LLM (or a person) writes it.
//
// Parse reads what LLMs actually produce — JSON inside Markdown fences or
// prose, tasks under "steps" or "workflow", ids as numbers, a string where a
// list is meant — and turns it into the canonical Plan with every default
// filled in. It is strict where meaning would otherwise be guessed: an unknown
// task type, a negative retry count or an unparsable timeout is an error that
// names the task, the field and its position in the source.
//
// Validate reports every structural problem at once (duplicate ids, missing
// dependencies, cycles, unknown agents, references to tasks that are not
// upstream, limits) as typed Problems with stable codes. A valid plan becomes a
// DAG: a gonum directed graph with a deterministic topological order and the
// phases the runner executes in parallel. Schema returns the JSON Schema of the
// canonical form, and a DAG renders as Markdown, Mermaid, DOT or JSON.
package plan
