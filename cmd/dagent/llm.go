package main

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/registry"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
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
	model  string
	record string
	replay string
	brief  bool
	fixes  int
}

func (f *llmFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model to ask (default $"+openai.EnvModel+")")
	fl.StringVar(&f.record, "record", "", "append every LLM exchange to `FILE` (JSON Lines), to replay it with --replay")
	fl.StringVar(&f.replay, "replay", "", "answer every LLM request from `FILE`, a recording made with --record; no server is called")
	fl.BoolVar(&f.brief, "brief", false, "give the planner short prompts, for models with a small context (local models of 2-4k tokens)")
	fl.IntVar(&f.fixes, "max-corrections", metaplanner.DefaultMaxCorrections, "times the planner may correct a plan the critic finds critical issues in (each resends the plan and the findings)")
	cmd.MarkFlagsMutuallyExclusive("record", "replay")
}

// planner returns the meta-planner on c, with the registry and the flags'
// options.
func (f *llmFlags) planner(c llm.Client, reg *registry.Registry) *metaplanner.Planner {
	opts := []metaplanner.Option{metaplanner.WithRegistry(reg), metaplanner.WithMaxCorrections(f.fixes)}
	if f.brief {
		opts = append(opts, metaplanner.WithBrief())
	}
	return metaplanner.New(c, opts...)
}

// lazyLLM is the LLM of one command: built the first time something needs
// it, so that a command that runs only registry workers never asks for an
// LLM. It is safe for concurrent use.
type lazyLLM struct {
	f      llmFlags
	budget llm.Budget
	// base answers in place of a server when set (dagent replay).
	base llm.Client
	// wrap, when set, wraps the client under the meter (the journal's
	// recording of every exchange). Set it before the client is built.
	wrap func(llm.Client) llm.Client

	mu       sync.Mutex
	built    bool
	meter    *llm.Meter
	recorder *llm.Recorder
	hasModel bool // the client has a default model
	err      error
}

func newLazyLLM(f llmFlags, budget llm.Budget) *lazyLLM {
	return &lazyLLM{f: f, budget: budget}
}

// client returns the client, metered by the command's budget. With
// needModel, the requests will name no model, so that the client must have
// a default one (a replay needs none: the requests are answered as
// recorded).
//
// Requests leave the model to the client rather than naming it, so that a
// recording replays without --model or $DAGENT_MODEL.
func (l *lazyLLM) client(needModel bool) (*llm.Meter, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.built {
		l.built = true
		l.meter, l.err = l.build()
	}
	if l.err != nil {
		return nil, l.err
	}
	if needModel && !l.hasModel {
		return nil, errNoModel
	}
	return l.meter, nil
}

func (l *lazyLLM) build() (*llm.Meter, error) {
	if l.base != nil {
		l.hasModel = true
		return llm.NewMeter(l.wrapped(l.base), l.budget), nil
	}
	if l.f.replay != "" {
		r, err := llm.Replay(l.f.replay)
		if err != nil {
			return nil, err
		}
		l.hasModel = true
		return llm.NewMeter(l.wrapped(r), l.budget), nil
	}
	cfg := openai.ConfigFromEnv()
	cfg.Model = cmp.Or(strings.TrimSpace(l.f.model), cfg.Model)
	c, err := openai.New(cfg)
	if errors.Is(err, openai.ErrNotConfigured) {
		return nil, errNoLLM
	}
	if err != nil {
		return nil, err
	}
	l.hasModel = cfg.Model != ""
	var inner llm.Client = c
	if l.f.record != "" {
		rec, err := llm.Record(c, l.f.record)
		if err != nil {
			return nil, err
		}
		l.recorder, inner = rec, rec
	}
	return llm.NewMeter(l.wrapped(inner), l.budget), nil
}

func (l *lazyLLM) wrapped(c llm.Client) llm.Client {
	if l.wrap == nil {
		return c
	}
	return l.wrap(c)
}

// close closes the recording, if any.
func (l *lazyLLM) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.recorder == nil {
		return nil
	}
	return l.recorder.Close()
}

// planAgents runs the LLM agents a plan defines (and plan.DefaultAgent) on
// l's client with the registry's tools. The runner asks for them before any
// task starts, and only for tasks that name no registry worker.
func planAgents(l *lazyLLM, reg *registry.Registry) runner.PlanAgents {
	return func(name string, def plan.Agent) (agent.Agent, error) {
		c, err := l.client(def.Model == "")
		if err != nil {
			return nil, err
		}
		return llmagent.Agents(c, reg, "")(name, def)
	}
}

// closeLLM closes l after a command and reports a failure to close it on
// stderr; err is the command's error, kept when set.
func closeLLM(cmd *cobra.Command, l *lazyLLM, err error) error {
	if cerr := l.close(); cerr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent:", cerr)
		if err == nil {
			return exitCode(exitUsage)
		}
	}
	return err
}
