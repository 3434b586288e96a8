package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// Environment variables of the suite. The LLM itself is configured as
// everywhere in dagent: OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_API_VERSION.
const (
	// EnvModel names the model; else DAGENT_MODEL; else DefaultModel.
	EnvModel = "DAGENT_E2E_MODEL"
	// EnvRecord, a directory, records every exchange of test T to
	// DIR/T.jsonl (llm.Record), replacing an earlier recording.
	EnvRecord = "DAGENT_E2E_RECORD"
	// EnvReplay, a directory, answers every request from DIR/T.jsonl
	// (llm.Replay), without network and without OPENAI_* variables.
	EnvReplay = "DAGENT_E2E_REPLAY"
	// EnvStrict, 1 or 0, asserts (or not) what only a capable model
	// achieves: valid plans, completed runs, right answers. Default: on,
	// except for the localllm toy model.
	EnvStrict = "DAGENT_E2E_STRICT"
	// EnvSmallContext, 1 or 0, fits the planner's prompts into a small
	// context window: metaplanner.WithBrief and no self-corrections. Default:
	// on for the localllm toy model only.
	EnvSmallContext = "DAGENT_E2E_SMALL_CONTEXT"
)

// DefaultModel is the model asked when neither DAGENT_E2E_MODEL nor
// DAGENT_MODEL names one.
const DefaultModel = "gpt-4o-mini"

// toyModel is the model name the localllm kit serves its toy model under.
const toyModel = "local-tiny"

// settingsFile, in a recording directory, holds the settings the recording
// was made with, so that a replay sends the very same requests.
const settingsFile = "settings.json"

// settings are the suite's settings, read once from the environment.
type settings struct {
	Model        string `json:"model"`
	Strict       bool   `json:"strict"`
	SmallContext bool   `json:"small_context"`

	record, replay string // directories
	configured     bool   // an LLM or a recording to replay is configured
	err            error  // a bad setting: every test fails with it
}

var suite settings

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "calc" {
		os.Exit(calcWorker())
	}
	suite = readSettings()
	os.Exit(m.Run())
}

// readSettings reads the environment (and, on replay, the recording's
// settings).
func readSettings() settings {
	s := settings{
		record: strings.TrimSpace(os.Getenv(EnvRecord)),
		replay: strings.TrimSpace(os.Getenv(EnvReplay)),
	}
	cfg := openai.ConfigFromEnv()
	s.configured = cfg.APIKey != "" || cfg.BaseURL != "" || s.replay != ""
	if s.record != "" && s.replay != "" {
		s.err = fmt.Errorf("set %s or %s, not both", EnvRecord, EnvReplay)
		return s
	}
	s.Model = firstNonEmpty(os.Getenv(EnvModel), cfg.Model, DefaultModel)
	strict, small := s.Model != toyModel, s.Model == toyModel
	if s.replay != "" {
		// The recording's settings are the defaults: the requests must be
		// the same as when it was made.
		if b, err := os.ReadFile(filepath.Join(s.replay, settingsFile)); err == nil {
			var rec settings
			if err := json.Unmarshal(b, &rec); err != nil {
				s.err = fmt.Errorf("%s: %w", filepath.Join(s.replay, settingsFile), err)
				return s
			}
			s.Model, strict, small = firstNonEmpty(rec.Model, s.Model), rec.Strict, rec.SmallContext
		}
	}
	var err error
	if s.Strict, err = flag(EnvStrict, strict); err != nil {
		s.err = err
	}
	if s.SmallContext, err = flag(EnvSmallContext, small); err != nil {
		s.err = err
	}
	if s.record != "" && s.err == nil {
		b, _ := json.MarshalIndent(s, "", "  ")
		if err := os.MkdirAll(s.record, 0o755); err != nil {
			s.err = err
		} else if err := os.WriteFile(filepath.Join(s.record, settingsFile), append(b, '\n'), 0o644); err != nil {
			s.err = err
		}
	}
	return s
}

// flag reads a boolean variable, def when it is unset.
func flag(name string, def bool) (bool, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 or 0", name, v)
	}
	return b, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// env is what one test talks to the LLM through.
type env struct {
	t *testing.T
	// client is what the code under test gets: every call goes through the
	// tap, which remembers it, and the meter, which counts and budgets it.
	client llm.Client
	tap    *tap
	meter  *llm.Meter
	budget executor.Budget
	ctx    context.Context
}

// Budgets of one test: generous for a real model, and a bound on what a
// misbehaving one can spend.
var testBudget = executor.Budget{MaxCalls: 60, MaxTokens: 400_000, MaxDuration: 8 * time.Minute}

// newEnv skips the test when no LLM is configured, and otherwise returns
// the test's client: live, recording or replaying.
func newEnv(t *testing.T) *env {
	t.Helper()
	if !suite.configured {
		t.Skipf("e2e: no LLM configured. Set %s (api.openai.com) or %s (any OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1), "+
			"with the model in %s or %s (default %s); or %s=DIR to replay a recording. "+
			"`make e2e` starts the bundled toy server (e2e/localllm) when none is set.",
			openai.EnvAPIKey, openai.EnvBaseURL, EnvModel, openai.EnvModel, DefaultModel, EnvReplay)
	}
	if suite.err != nil {
		t.Fatalf("e2e: %v", suite.err)
	}
	var base llm.Client
	name := strings.ReplaceAll(t.Name(), "/", "_") + ".jsonl"
	switch {
	case suite.replay != "":
		r, err := llm.Replay(filepath.Join(suite.replay, name))
		if err != nil {
			t.Fatalf("e2e: replay: %v (record it first with %s=DIR)", err, EnvRecord)
		}
		base = r
	default:
		cfg := openai.ConfigFromEnv()
		cfg.Model = suite.Model
		c, err := openai.New(cfg)
		if err != nil {
			t.Fatalf("e2e: %v", err)
		}
		base = c
		if suite.record != "" {
			path := filepath.Join(suite.record, name)
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			rec, err := llm.Record(c, path)
			if err != nil {
				t.Fatalf("e2e: record: %v", err)
			}
			t.Cleanup(func() {
				if err := rec.Close(); err != nil {
					t.Error(err)
				}
			})
			base = rec
		}
	}
	meter := llm.NewMeter(base, llm.Budget{MaxCalls: testBudget.MaxCalls, MaxTokens: testBudget.MaxTokens})
	tp := &tap{next: meter}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	t.Cleanup(cancel)
	t.Cleanup(func() {
		u := meter.Usage()
		t.Logf("LLM: %d calls, %d prompt + %d completion tokens (model %s, strict %v, small context %v)",
			meter.Calls(), u.PromptTokens, u.CompletionTokens, suite.Model, suite.Strict, suite.SmallContext)
	})
	return &env{t: t, client: tp, tap: tp, meter: meter, budget: testBudget, ctx: ctx}
}

// planner returns the meta-planner of the suite's settings.
func (e *env) planner(reg *registry.Registry, more ...metaplanner.Option) *metaplanner.Planner {
	opts := []metaplanner.Option{metaplanner.WithRegistry(reg)}
	if suite.SmallContext {
		opts = append(opts, metaplanner.WithBrief(), metaplanner.WithMaxCorrections(0))
	}
	return metaplanner.New(e.client, append(opts, more...)...)
}

// maxCorrections is the planner's number of self-corrections.
func maxCorrections() int {
	if suite.SmallContext {
		return 0
	}
	return metaplanner.DefaultMaxCorrections
}

// criticOptions review plans as the planner and the executor do.
func criticOptions(reg *registry.Registry) []critic.Option {
	return []critic.Option{critic.WithCatalog(reg)}
}

// executorOptions run plans on reg's workers and on LLM agents of e's
// client, with e's budget, observed by obs.
func (e *env) executorOptions(reg *registry.Registry, obs *events, replanner executor.Replanner) []executor.Option {
	opts := []executor.Option{
		executor.WithRegistry(reg),
		executor.WithRunner(
			runner.WithPlanAgents(llmagent.Agents(e.client, reg, "")),
			runner.WithObserver(obs),
			runner.WithTaskTimeout(4*time.Minute),
		),
		executor.WithBudget(e.budget, e.meter),
		executor.WithMaxReplans(2),
	}
	if replanner != nil {
		opts = append(opts, executor.WithReplanner(replanner))
	}
	return opts
}

// exchange is one call seen by the tap.
type exchange struct {
	req  llm.Request
	resp llm.Response
	err  error
}

// tap is a Client that remembers every call it forwards.
type tap struct {
	next llm.Client
	mu   sync.Mutex
	all  []exchange
}

func (t *tap) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := t.next.Complete(ctx, req)
	t.mu.Lock()
	t.all = append(t.all, exchange{req: req, resp: resp, err: err})
	t.mu.Unlock()
	return resp, err
}

// exchanges returns the calls so far that match keep (all when nil).
func (t *tap) exchanges(keep func(llm.Request) bool) []exchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []exchange
	for _, x := range t.all {
		if keep == nil || keep(x.req) {
			out = append(out, x)
		}
	}
	return out
}

// plannerCall reports whether req is a request of the meta-planner.
func plannerCall(req llm.Request) bool {
	return req.Schema != nil && req.Schema.Name == metaplanner.SchemaName
}

// agentCall reports whether req is a request of an LLM sub-agent.
func agentCall(req llm.Request) bool { return !plannerCall(req) }

// events records the runner's events of every run of an execution.
type events struct {
	mu  sync.Mutex
	all []runner.Event
}

func (o *events) Observe(e runner.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all = append(o.all, e)
}

func (o *events) list() []runner.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.all)
}

// runs returns the run ids in the order the runs started.
func (o *events) runs() []string {
	var ids []string
	for _, e := range o.list() {
		if !slices.Contains(ids, e.RunID) {
			ids = append(ids, e.RunID)
		}
	}
	return ids
}
