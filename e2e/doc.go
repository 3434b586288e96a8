// Package e2e is dagent's end-to-end suite against a real LLM: the
// meta-planner plans missions over a registry of Go tools, Go workers and a
// command worker, the executor runs the plans and repairs an injected
// failure with a replan, and an LLM sub-agent reads a worker's result with a
// tool and an output schema. The tests are in the _test.go files; they skip
// unless OPENAI_API_KEY or OPENAI_BASE_URL (or DAGENT_E2E_REPLAY) is set.
// `make e2e` runs them, against the toy llama.cpp server of e2e/localllm
// when no LLM is configured. docs/llm.md describes the suite.
package e2e
