package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round answers of the fake planner.
const (
	roundCountry    = `{"action": "continue", "tasks": [{"id": "country", "input": "Which country is the largest by area? Answer with its name only."}], "reason": "the capital depends on the country"}`
	roundCapital    = `{"action": "continue", "tasks": [{"id": "capital", "input": "Name the capital of {{results.country}}. Answer with its name only.", "depends_on": ["country"]}]}`
	roundPopulation = `{"action": "continue", "tasks": [{"id": "population", "input": "Roughly how many people live in the city given?", "inputs": {"city": {"from": "capital"}}}]}`
	roundDone       = `{"action": "done", "deliverable": ["capital", "population"], "reason": "both are known"}`
)

func TestRunRounds(t *testing.T) {
	f := startLLM(t, script{kindRound: {roundCountry, roundCapital, roundPopulation, roundDone}, kindAgent: {"Russia", "Moscow", "About 13 million"}})
	code, doc, stderr := runJSON(t, "--mission", "What is the capital of the largest country, and its population?", "--rounds", "3")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", doc["status"])
	assert.Equal(t, 3.0, doc["rounds"])
	assert.Equal(t, []any{"capital", "population"}, doc["deliverable"])
	assert.Equal(t, 3.0, doc["execution_attempts"])
	assert.Equal(t, 0.0, doc["replan_count"])
	assert.Equal(t, "About 13 million", taskField(t, doc, "population", "output"))
	assert.Len(t, doc["replan_history"], 2, "a record of each round after the first")
	assert.Len(t, f.got(kindAgent), 3, "each task ran once")
	assert.Len(t, f.got(kindPlan), 0)
	rounds := f.got(kindRound)
	require.Len(t, rounds, 4)
	last := lastUser(t, rounds[3])
	assert.Contains(t, last, "About 13 million")
	assert.Contains(t, last, "round budget of 3 is spent")
	assert.Contains(t, lastUser(t, f.got(kindAgent)[1]), "<data source=\"results.country\">\nRussia\n</data>", "a later round reads an earlier result")
}

func TestRunRoundsText(t *testing.T) {
	startLLM(t, script{kindRound: {roundCountry, roundCapital, `{"action": "done", "deliverable": ["capital"]}`}, kindAgent: {"Russia", "Moscow"}})
	code, stdout, stderr := dagent(t, "", "run", "--mission", "What is the capital of the largest country?", "--rounds", "3")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "round 1 planned: 1 task added")
	assert.Contains(t, stderr, "the planner is done after round 2")
	assert.Contains(t, stdout, "== capital ==\nMoscow")
	assert.NotContains(t, stdout, "== country ==", "the deliverable's outputs, not the final tasks'")
	assert.Contains(t, stdout, "in 2 rounds")
}

func TestRunRoundsHalts(t *testing.T) {
	for _, tc := range []struct {
		name, rounds string
		answers      []string
		halt, text   string
	}{
		{"failed", "3", []string{roundCountry, `{"action": "failed", "reason": "no source agrees on the largest country"}`}, "gave_up", "the planner gave up: no source agrees"},
		{"round budget", "1", []string{roundCountry, roundCapital}, "max_rounds", "the round budget is spent"},
		{"unknown task in inputs", "3", []string{roundCountry,
			`{"action": "continue", "tasks": [{"id": "capital", "inputs": {"country": {"from": "biggest"}}}]}`}, "replan_failed", "no valid plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			startLLM(t, script{kindRound: tc.answers, kindAgent: {"Russia", "Moscow"}})
			code, doc, stderr := runJSON(t, "--mission", "What is the capital of the largest country?", "--rounds", tc.rounds)
			require.Equal(t, exitInvalid, code, stderr)
			assert.Equal(t, tc.halt, doc["halt"])
			assert.Contains(t, doc["error"], tc.text)
			assert.Equal(t, "Russia", taskField(t, doc, "country", "output"), "what ran is kept")
		})
	}
}

func TestRunRoundsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mission", "m", "--rounds", "-1"}, "--rounds must not be negative"},
		{[]string{"--mission", "m", "--rounds", "2", "--replan"}, "--rounds and --replan cannot be combined"},
		{[]string{"--mission", "m", "--rounds", "2", "--max-replans", "1"}, "--max-replans cannot be combined with --rounds"},
		{[]string{"--mission", "m", "--rounds", "2", "--max-plan-growth", "4"}, "--max-plan-growth cannot be combined with --rounds"},
		{[]string{"--mission", "m", "--rounds", "2", "--halt-on", "Rate Limited"}, `bad class "Rate Limited"`},
	} {
		code, _, stderr := dagent(t, "", append([]string{"run"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, tc.want)
	}
}

// A run in rounds recorded with --record replays without a server.
func TestRunRoundsReplay(t *testing.T) {
	f := startLLM(t, script{kindRound: {roundCountry, roundCapital, `{"action": "done", "deliverable": ["capital"]}`}, kindAgent: {"Russia", "Moscow"}})
	rec := filepath.Join(t.TempDir(), "rounds.jsonl")
	mission := "What is the capital of the largest country?"
	code, ran, stderr := dagent(t, "", "run", "--mission", mission, "--rounds", "3", "--format", "json", "--record", rec)
	require.Equal(t, exitOK, code, stderr)
	f.srv.Close()
	noLLM(t)
	code, again, stderr := dagent(t, "", "run", "--mission", mission, "--rounds", "3", "--format", "json", "--replay", rec)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, withoutTimes(t, ran), withoutTimes(t, again))
	data, err := os.ReadFile(rec)
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(string(data), "\n"), "three rounds and two agents")
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(again), &doc))
	assert.Equal(t, []any{"capital"}, doc["deliverable"])
}
