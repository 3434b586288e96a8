package main

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/spf13/cobra"
)

// Errors of a command that needs an LLM and has none. main prints them as
// they are, whatever wraps them, and exits 2.
var (
	errNoLLM = errors.New("this command needs an LLM: set " + openai.EnvAPIKey + " (or " + openai.EnvBaseURL +
		" for another OpenAI-compatible server), or replay a recording with --replay FILE")
	errNoModel = errors.New("this command needs a model: set " + openai.EnvModel + " or pass --model NAME")
)

// llmFlags are the flags of every command that may talk to an LLM.
type llmFlags struct {
	model    string
	record   string
	replay   string
	brief    bool
	fixes    int
	planOnly bool
	// temperature is the sampling temperature, when --temperature is set.
	temperature float64
}

func (f *llmFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model to ask (default $"+openai.EnvModel+")")
	fl.StringVar(&f.record, "record", "", "append every LLM exchange to `FILE` (JSON Lines), to replay it with --replay")
	fl.StringVar(&f.replay, "replay", "", "answer every LLM request from `FILE`, a recording made with --record; no server is called")
	fl.BoolVar(&f.brief, "brief", false, "give the planner short prompts, for models with a small context (local models of 2-4k tokens)")
	fl.IntVar(&f.fixes, "max-corrections", metaplanner.DefaultMaxCorrections, "times the planner may correct a plan the critic finds critical issues in (each resends the plan and the findings)")
	fl.Float64Var(&f.temperature, "temperature", 0, "sampling temperature of every LLM call, from 0 to 2 (default: the server's)")
	fl.BoolVar(&f.planOnly, "plan-only", false, "forbid the planner to answer the mission directly or to ask a question, for unattended runs: it plans, or no plan is valid")
	cmd.MarkFlagsMutuallyExclusive("record", "replay")
}

// check rejects a temperature out of range.
func (f *llmFlags) check(cmd *cobra.Command) error {
	if t := f.temperatureSet(cmd); t != nil && !(*t >= 0 && *t <= durable.MaxTemperature) {
		return fmt.Errorf("--temperature is %g; want 0 to %g", *t, durable.MaxTemperature)
	}
	return nil
}

// temperatureSet is the temperature, nil when --temperature is not set.
func (f *llmFlags) temperatureSet(cmd *cobra.Command) *float64 {
	if !cmd.Flags().Changed("temperature") {
		return nil
	}
	t := f.temperature
	return &t
}

// spec is the settings of the flags, as a run keeps them; MaxTurns is the
// run's to set.
func (f *llmFlags) spec(cmd *cobra.Command) durable.LLMSpec {
	return durable.LLMSpec{Model: strings.TrimSpace(f.model), Brief: f.brief, MaxCorrections: f.fixes, PlanOnly: f.planOnly, Temperature: f.temperatureSet(cmd)}
}

// lazyLLM is the LLM of one command: built the first time something needs
// it, so that a command that runs only registry workers never asks for an
// LLM. Its client method is the [durable.ClientFunc] of the command's run,
// which meters and journals it. It is safe for concurrent use.
type lazyLLM struct {
	f llmFlags

	mu       sync.Mutex
	built    bool
	c        llm.Client
	recorder *llm.Recorder
	hasModel bool // the client has a default model
	err      error
}

// client returns the client, built for model on the first call (--model
// wins, then model, then $DAGENT_MODEL). With needModel, the requests will
// name no model, so that the client must have a default one (a recording
// needs none: the requests are answered as recorded).
//
// Requests leave the model to the client rather than naming it, so that a
// recording replays without --model or $DAGENT_MODEL.
func (l *lazyLLM) client(model string, needModel bool) (llm.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.built {
		l.built = true
		l.c, l.err = l.build(model)
	}
	if l.err != nil {
		return nil, l.err
	}
	if needModel && !l.hasModel {
		return nil, errNoModel
	}
	return l.c, nil
}

func (l *lazyLLM) build(model string) (llm.Client, error) {
	if l.f.replay != "" {
		r, err := llm.Replay(l.f.replay)
		if err != nil {
			return nil, err
		}
		l.hasModel = true
		return r, nil
	}
	cfg := openai.ConfigFromEnv()
	cfg.Model = cmp.Or(strings.TrimSpace(l.f.model), model, cfg.Model)
	c, err := openai.New(cfg)
	if errors.Is(err, openai.ErrNotConfigured) {
		return nil, errNoLLM
	}
	if err != nil {
		return nil, err
	}
	l.hasModel = cfg.Model != ""
	if l.f.record == "" {
		return c, nil
	}
	if l.recorder, err = llm.Record(c, l.f.record); err != nil {
		return nil, err
	}
	return l.recorder, nil
}

// closeLLM closes the recording of l, if any, after a command and reports
// a failure to close it on stderr; err is the command's error, kept when
// set.
func closeLLM(cmd *cobra.Command, l *lazyLLM, err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.recorder == nil {
		return err
	}
	if cerr := l.recorder.Close(); cerr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent:", cerr)
		if err == nil {
			return exitCode(exitUsage)
		}
	}
	return err
}
