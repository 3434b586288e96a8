// Package telemetry makes dagent's runs OpenTelemetry traces and metrics.
//
// An [Observer] is a [runner.Observer] (and a [runner.ContextObserver]):
// given to a runner, an executor or a durable run, it makes each run a
// trace and records the runs, tasks, replans and model calls in metrics.
// It depends on the OpenTelemetry API only: the program chooses the SDK,
// the exporters and the sampling, and hands the providers to [New] (the
// global ones by default, which do nothing until a program sets them).
// [Observer.Client] wraps an [llm.Client] so that each call is a span of
// the OpenTelemetry semantic conventions for generative AI, a child of the
// attempt that made it. Package prom serves the metrics to Prometheus.
//
// # Traces
//
// A run is a trace whose root is the run's span; its children are the
// phases of a phased run and the tasks, and a task's are its attempts and
// the checks of their outputs (the output schema, the verification
// predicate, the rubric's judge). An attempt spans its agent's call, from
// its start to the agent's return; the check after it starts there, and
// a retry's wait is the gap before the next attempt. A model call made by
// an agent is a child of its attempt. A replanning execution is one trace:
// the first run is the root, and the planning of each repair ("replan")
// and the run of each repair plan (run id ID.1, ID.2, ...) are its
// children, after it in time; an execution in rounds is rooted at the
// planning of its first round. A run resumed later, in this process or
// another, starts a trace of its own.
//
//	dagent run                      dagent.run.id, dagent.run.status
//	├── phase 0                     dagent.phase
//	├── task fetch                  dagent.task.id, dagent.task.status, dagent.task.attempts, dagent.failure.class
//	│   ├── attempt 1               dagent.attempt (error status when the agent failed)
//	│   │   └── chat gpt-4o         gen_ai.* (a model call of an LLM agent)
//	│   ├── verify                  dagent.verify.passed (error status when it did not)
//	│   ├── attempt 2
//	│   └── verify
//	├── replan                      the failure's task and class; the repair's version and task counts
//	├── halt                        dagent.halt: why an execution stopped replanning
//	└── dagent run                  a repair plan's run, run id ID.1, with its phases and tasks
//
// Every span of a run has dagent.run.id, and every span of a task
// dagent.task.id. A run's and a task's span have the tokens their
// attempts used (dagent.usage.input_tokens, dagent.usage.output_tokens).
// A failed run, task, attempt, check or replan has the error status, its
// description the first line of the error. The spans are made from the
// events, at the events' times; the run's span and those of its attempts
// are also put in the contexts of the run and of each attempt, so that an
// agent's own spans are children of its attempt. When the run's span does
// not record (a no-op provider, a sampler that dropped the trace), no
// span under it is made.
//
// A model call's span ([Observer.Client]) follows the GenAI conventions:
// name "chat MODEL", kind client, gen_ai.operation.name "chat",
// gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model,
// gen_ai.response.finish_reasons, gen_ai.usage.input_tokens,
// gen_ai.usage.output_tokens, gen_ai.request.max_tokens and
// gen_ai.request.temperature when the request sets them,
// gen_ai.output.type "json" for a request for structured output, and
// error.type on a failure. Prompts and answers are not recorded.
//
// # Metrics
//
//	name                              kind               unit     attributes
//	dagent.tasks                      counter            {task}   dagent.task.status, dagent.failure.class
//	dagent.task.duration              histogram          s        dagent.task.status
//	dagent.task.retries               counter            {retry}
//	dagent.task.tokens                counter            {token}  gen_ai.token.type
//	dagent.runs                       counter            {run}    dagent.run.status
//	dagent.run.duration               histogram          s        dagent.run.status
//	dagent.replans                    counter            {replan} dagent.replan.outcome
//	dagent.llm.calls                  counter            {call}   gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model, error.type
//	gen_ai.client.token.usage         histogram          {token}  gen_ai.operation.name, gen_ai.provider.name, gen_ai.token.type, gen_ai.request.model, gen_ai.response.model
//	gen_ai.client.operation.duration  histogram          s        gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model, error.type
//
// dagent.tasks counts the tasks that reached a final state: dagent.task.status
// is done, failed or skipped, and dagent.failure.class is the class of a
// failed or skipped task's failure ([runner.Class]). Waiting for review is
// a pause, not an end: a review task is counted once, when a resume goes
// on with its decision (done when approved, failed when rejected), and a
// run that stops to wait is not counted until it ends. dagent.task.duration
// is a task's time from its start to its final state, in the run that
// reached it; dagent.task.tokens the tokens of a task's attempts, counted
// when it settles. dagent.runs and dagent.run.duration count and time the
// runs that ended (dagent.run.status completed, failed or replan_required:
// a replanning execution's runs count one each; a run resumed after it
// failed, or was interrupted, counts again when it ends).
// dagent.replans counts the repair plans asked for, by outcome: adopted
// or failed. The last three are the model calls of [Observer.Client].
// Task and run durations and tokens come from the events, so that events
// read back from a journal give the metrics the live run gave; the model
// calls are measured as they are made.
package telemetry
