// Package metaplanner is dagent's MetaPlanner: it asks an LLM for a plan
// that fulfils a mission, and, when a task of a running plan fails, for a
// repair plan of the unfinished tail.
//
// Plan sends the mission (as a data block of [llm.WriteData]: it may come
// from an untrusted user) with the workers and tools of the host's
// registry, and asks for
// structured output: an envelope whose route says how the mission is best
// handled — "plan" (run a plan), "synthesis" (the model answers directly)
// or "clarify" (the model asks the user a question). A plan is read with
// [plan.Parse], which tolerates what models write (a bare plan without the
// envelope, a plan in a Markdown fence, prose around it), and reviewed by
// the critic against the registry. Critical findings go back to the model,
// each with the rule's fix, for a bounded number of self-corrections; a
// plan with only warnings is accepted, the warnings kept in the [Result]'s
// report. When no acceptable plan comes, the error matches [ErrNoValidPlan]
// and is a *[PlanError] holding the last report.
//
// Replan asks for a repair plan after a failure: it hands the model the
// original plan, the results of the completed tasks (truncated), the
// failed task with its output, diagnosis and failure class — each a data
// block, as untrusted as the mission — and the
// repairs tried before, so that it does not repeat an approach that
// failed. A repair plan must keep every completed task with its id — the
// runner skips those and reuses their results — and is reviewed like a new
// plan, with one self-correction. [Planner.Repair] is Replan as the
// executor's [executor.Replanner]: a Planner repairs an execution's plans
// as it goes, given with executor.WithReplanner.
//
// An [Outcome] is a planning as a host prints or sends it — the result,
// and the error of a planning that found no plan to use — and its JSON
// form is the one document of a planning.
//
// A [Planner] is safe for concurrent use if its [llm.Client] is.
package metaplanner
