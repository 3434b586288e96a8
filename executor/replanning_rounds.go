package executor

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// Start is the first decision of the execution: [StepRun] to run the plan
// it was given, or, in rounds ([WithRounds]) without one, [StepRound] to
// plan the first round. Call it once, before anything else; a driver of
// repairs alone may skip it.
func (r *Replanning) Start() Decision {
	if r.c.rounds != nil && r.d == nil {
		return r.askRound(nil)
	}
	return Decision{Step: StepRun}
}

// askRound decides after the run rr of a round (nil before the first
// round): halt, or ask the round planner for the next round.
func (r *Replanning) askRound(rr *runner.Result) Decision {
	round := r.res.Rounds + 1
	state := RoundState{Round: round, MaxRounds: r.c.maxRounds, Plan: r.res.Plan, Completed: maps.Clone(r.completed), History: slices.Clone(r.res.History)}
	var last Failure
	if rr != nil {
		state.Failed, state.Pending = roundOutcome(rr, r.res.Plan)
		if len(state.Failed) > 0 {
			last = state.Failed[0]
		}
		last.Plan = r.res.Plan
		// A failure that halts is never shown to the planner: the round
		// planner reads the same outputs a repair prompt would.
		for _, f := range state.Failed {
			if f.Class != "" && r.c.halts(runner.Class(f.Class)) {
				f.Plan = r.res.Plan
				r.stop(f.Class, f, nil)
				return r.decide(StepHalt, f)
			}
		}
		halt := ""
		switch {
		case r.overBudget():
			halt = HaltBudget
		case r.streak >= r.c.maxConsecutiveFailures:
			halt = HaltConsecutiveFailures
		case len(state.Failed) > 0 && r.c.maxFlakyStreak > 0 && r.flaky >= r.c.maxFlakyStreak:
			halt = HaltFlakyStreak
		}
		if halt != "" {
			r.stop(halt, last, nil)
			return r.decide(StepHalt, last)
		}
	}
	r.emit(runner.Event{Kind: EventRoundRequested, Version: r.version, Attempt: round})
	r.round, r.failure = &state, &last
	dec := r.decide(StepRound, last)
	dec.Round = &state
	return dec
}

// RoundPlan is the plan of the next round that a's continue makes
// ([NextRound] of the plan that ran last, with the mission when it has
// none): the plan a driver checks and reviews before it calls
// [Replanning.Rounded]. Nil when a is no usable continue.
func (r *Replanning) RoundPlan(mission string, a *RoundAnswer) *plan.Plan {
	if a == nil || a.Action != RoundContinue || a.Check(r.completed) != nil {
		return nil
	}
	next := NextRound(r.res.Plan, r.completed, a.Tasks, a.Agents)
	if next.Mission == "" {
		next.Mission = mission
	}
	return next
}

// Rounded decides about the round planner's answer to the [StepRound]
// decision: a and err are what it returned; nd and rep are the check and
// the critic's review of [Replanning.RoundPlan] of a (nd nil when the
// plan cannot run), read only for a continue. A done ends the execution
// completed ([StepDone]) with its deliverable; a failed, an error, an
// answer that cannot be acted on ([RoundAnswer.Check]), a continue past
// the round budget, a plan the gate refuses, or a spent budget halts;
// otherwise the round's plan is the next version ([StepRun]). When the
// context the planner was asked under ended and the answer cannot be
// acted on, call [Replanning.OutOfTime] or [Replanning.Cancelled]
// instead. Called with no [StepRound] pending, Rounded decides
// [StepDone] and changes nothing.
func (r *Replanning) Rounded(a *RoundAnswer, err error, nd *plan.DAG, rep critic.Report) Decision {
	if r.round == nil {
		return Decision{Step: StepDone}
	}
	round, last := r.round.Round, *r.failure
	r.round, r.failure = nil, nil
	if err == nil && a == nil {
		err = errors.New("the round planner gave no answer")
	}
	if err == nil {
		err = a.Check(r.completed)
	}
	if err != nil {
		r.refused(last, err)
		return r.decide(StepHalt, last)
	}
	switch a.Action {
	case RoundDone:
		r.res.Deliverable = slices.Clone(a.Deliverable)
		r.res.Status, r.res.Err, r.res.Replan = runner.StatusCompleted, nil, nil
		r.emit(runner.Event{Kind: EventRoundsDone, Version: r.version, Attempt: round})
		return r.decide(StepDone, Failure{})
	case RoundFailed:
		f := last
		if f.Diagnosis == "" {
			f.Diagnosis = a.Reason
		}
		r.stop(HaltGaveUp, f, &GaveUpError{Reason: a.Reason})
		return r.decide(StepHalt, f)
	}
	if round > r.c.maxRounds {
		r.stop(HaltMaxRounds, last, fmt.Errorf("the round budget of %d is spent", r.c.maxRounds))
		return r.decide(StepHalt, last)
	}
	if !r.c.admits(nd, &rep) {
		r.refused(last, &RefusedError{Report: rep, Gate: r.c.gate})
		return r.decide(StepHalt, last)
	}
	if r.overBudget() {
		r.stop(HaltBudget, last, nil)
		return r.decide(StepHalt, last)
	}
	next := nd.Plan()
	if r.d == nil {
		r.res.Report = rep
	} else {
		// Version 0 is the first round, which no round led to.
		r.version++
		r.res.History = append(r.res.History, Trial{Attempt: r.version, Round: round, TaskID: last.TaskID, Class: last.Class,
			Diagnosis: last.Diagnosis, Output: excerpt(last.Output), NewTaskCount: NewTasks(r.res.Plan, next)})
	}
	r.emit(runner.Event{Kind: EventRoundAdopted, Version: r.version, Attempt: round, Tasks: len(next.Tasks), NewTasks: NewTasks(r.res.Plan, next)})
	r.adopt(nd, round)
	return Decision{Step: StepRun, Failure: last}
}
