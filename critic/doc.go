// Package critic reviews a plan before a single task runs: the PlanCritic
// of dagent.
//
// [Review] runs static checks — the structural problems plan validation
// finds, predicates that do not compile or can never pass, workers and
// tools the registry does not have, and design smells: wide
// phases without a synthesis gate, parallel explosions, optimism about
// flaky operations, orphan tasks, dependencies the input never uses,
// retries without a budget, gates without inputs — and returns a [Report]:
// the issues in a stable order, a score from 1 to 10, a one-sentence
// summary and the recommendations to act on.
//
// The report serves three readers: a person reading `dagent lint`, a CI
// job gating on the worst severity, and the meta-planner handing the
// findings back to an LLM so that it corrects its plan. [ReviewWith] merges
// the findings of an LLM [Reviewer] into the same report; when the reviewer
// fails, the static findings are still returned.
package critic
