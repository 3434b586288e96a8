//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runsOf lists the journal's runs as JSON.
func runsOf(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	code, stdout, stderr := dagent(t, "", append([]string{"runs", "--format", "json"}, args...)...)
	require.Equal(t, exitOK, code, stderr)
	var doc struct {
		Version int              `json:"version"`
		Runs    []map[string]any `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	require.Equal(t, docVersion, doc.Version, stdout)
	require.NotNil(t, doc.Runs, stdout)
	return doc.Runs
}

// reviewPlan waits for a review of fetch's output.
const reviewPlan = `{"mission": "Publish the numbers", "tasks": [
	{"id": "fetch", "agent": "work", "input": "start"},
	{"id": "check", "type": "human_review", "depends_on": ["fetch"], "input": "Is {{results.fetch.v}} right?"},
	{"id": "publish", "agent": "work", "depends_on": ["check"], "input": "publish"}]}`

// journalOf runs a completed chain, a failed plan and a run waiting for a
// review into a new journal, and returns it with the waiting run's id.
func journalOf(t *testing.T) (db, waiting string) {
	t.Helper()
	dir := t.TempDir()
	reg, _ := workRegistry(t, dir)
	db = filepath.Join(dir, "runs.db")
	for _, p := range []struct {
		src  string
		code int
	}{
		{chainPlan, exitOK},
		{`{"tasks": [{"id": "boom", "agent": "fail"}]}`, exitInvalid},
		{reviewPlan, exitWaiting},
	} {
		path := filepath.Join(dir, "plan.json")
		require.NoError(t, os.WriteFile(path, []byte(p.src), 0o600))
		code, doc, stderr := runJSON(t, path, "--registry", reg, "--db", db)
		require.Equal(t, p.code, code, stderr)
		waiting = doc["run_id"].(string)
	}
	return db, waiting
}

func TestRunsWithoutAJournal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	code, stdout, stderr := dagent(t, "", "runs", "--db", db)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "no runs: no journal at "+db+" yet\n", stdout)
	code, stdout, stderr = dagent(t, "", "runs", "--db", db, "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.JSONEq(t, `{"version": 1, "runs": []}`, stdout)
	assert.NoFileExists(t, db, "listing creates no journal")
}

func TestRunsFilters(t *testing.T) {
	db, waiting := journalOf(t)
	statuses := func(runs []map[string]any) []any {
		var out []any
		for _, r := range runs {
			out = append(out, r["status"])
		}
		return out
	}
	tests := []struct {
		args []string
		want []any
	}{
		{nil, []any{"waiting", "failed", "completed"}},
		{[]string{"--limit", "2"}, []any{"waiting", "failed"}},
		{[]string{"--status", "completed"}, []any{"completed"}},
		{[]string{"--status", "completed", "--status", "waiting"}, []any{"waiting", "completed"}},
		{[]string{"--status", "failed", "--limit", "1"}, []any{"failed"}},
		{[]string{"--status", "interrupted"}, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, statuses(runsOf(t, append([]string{"--db", db}, tt.args...)...)), "%v", tt.args)
	}
	assert.Equal(t, waiting, runsOf(t, "--db", db, "--limit", "1")[0]["id"])

	code, stdout, stderr := dagent(t, "", "runs", "--db", db, "--utc")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(waiting)+`\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+waiting\s+1/3\s+Publish the numbers$`, stdout)
	code, stdout, _ = dagent(t, "", "runs", "--db", db, "--status", "cancelled")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "no runs of status cancelled in "+db+"\n", stdout)

	code, _, stderr = dagent(t, "", "runs", "--db", db, "--status", "done")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown status "done"; use one of running, interrupted, completed`)
	code, _, stderr = dagent(t, "", "runs", "--db", db, "--limit", "-1")
	assert.Equal(t, exitUsage, code, stderr)
}

func TestRunsTimesNameTheirZone(t *testing.T) {
	db, waiting := journalOf(t)
	t.Setenv("TZ", "Asia/Kolkata")
	loc, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = loc
	code, stdout, stderr := dagent(t, "", "runs", "--db", db)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(waiting)+`\s+\S+ \S+ IST\s+waiting`, stdout)
	code, stdout, stderr = dagent(t, "", "show", waiting, "--db", db)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^started   \S+ \S+ IST$`, stdout)
	code, stdout, stderr = dagent(t, "", "show", waiting, "--db", db, "--utc")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^started   \S+ \S+ UTC$`, stdout)
}

func TestShowWaitingRunPrintsReviews(t *testing.T) {
	db, waiting := journalOf(t)
	code, stdout, stderr := dagent(t, "", "show", waiting, "--db", db)
	require.Equal(t, exitOK, code, stderr)
	v := regexp.MustCompile(`"v": "(\d+)"`).FindStringSubmatch(stdout)
	require.NotNil(t, v, stdout)
	assert.Contains(t, stdout, "\nreview check waits for a decision:\n  Is "+v[1]+" right?\n  it reviews fetch:\n    {\n      \"task\": \"fetch\",")
	assert.Contains(t, stdout, "\nTo resume, decide each review (=approve or =reject):\n  dagent resume "+waiting+" --review check=approve\n")

	// The command it prints resumes the run.
	code, _, stderr = dagent(t, "", "resume", waiting, "--review", "check=approve", "--db", db)
	require.Equal(t, exitOK, code, stderr)
	code, stdout, _ = dagent(t, "", "show", waiting, "--db", db)
	require.Equal(t, exitOK, code)
	assert.NotContains(t, stdout, "waits for a decision")
}

func TestShowTask(t *testing.T) {
	db, waiting := journalOf(t)
	code, stdout, stderr := dagent(t, "", "show", waiting, "--db", db, "--task", "fetch")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "task fetch of run "+waiting+"  done\nagent     work\nattempts  1\nstarted   "), stdout)
	assert.Contains(t, stdout, "\n== input ==\nstart\n")
	assert.Contains(t, stdout, "\n== output ==\n{\n  \"task\": \"fetch\",")
	assert.Regexp(t, `(?m)^   3  \S+  fetch: started$`, stdout)
	assert.NotContains(t, stdout, "check:", "the events of that task only")

	code, stdout, stderr = dagent(t, "", "show", waiting, "--db", db, "--task", "check", "--no-outputs")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "type        human_review\ndepends on  fetch\n")
	assert.Regexp(t, `\n== input ==\nIs \d+ right\?\n`, stdout, "the input as the review got it")
	assert.NotContains(t, stdout, "== output ==")

	code, stdout, stderr = dagent(t, "", "show", waiting, "--db", db, "--task", "fetch", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Equal(t, "fetch", doc["task_id"])
	assert.Equal(t, "done", doc["status"])
	assert.Equal(t, "start", doc["input"])
	assert.Equal(t, "fetch", doc["output"].(map[string]any)["task"])
	assert.Len(t, doc["events"], 2)

	code, _, stderr = dagent(t, "", "show", waiting, "--db", db, "--task", "nope")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `has no task "nope"; its tasks are fetch, check, publish`)
}

func TestShowNoOutputs(t *testing.T) {
	db, waiting := journalOf(t)
	code, stdout, stderr := dagent(t, "", "show", waiting, "--db", db, "--no-outputs")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "== fetch ==")
	assert.NotContains(t, stdout, "it reviews")
	assert.Contains(t, stdout, "review check waits for a decision:")
	code, stdout, stderr = dagent(t, "", "show", waiting, "--db", db, "--no-outputs", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Nil(t, doc["tasks"].(map[string]any)["fetch"].(map[string]any)["output"])
}

func TestShowFollowOfARunThatEnded(t *testing.T) {
	db, waiting := journalOf(t)
	code, stdout, stderr := dagent(t, "", "show", waiting, "--db", db, "--follow")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "\nEVENTS\n   1  ")
	assert.True(t, strings.HasSuffix(stdout, "  run waiting\nrun "+waiting+" waiting\n"), stdout)
	code, stdout, stderr = dagent(t, "", "show", waiting, "--db", db, "--follow", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 10, "one event a line")
	var last map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[9]), &last))
	assert.Equal(t, "run_finished", last["kind"])
	assert.Equal(t, 10.0, last["seq"])
}

func TestPrune(t *testing.T) {
	db, waiting := journalOf(t)
	before := runsOf(t, "--db", db)
	require.Len(t, before, 3)

	// A run that a live process owns is never deleted.
	host, err := os.Hostname()
	require.NoError(t, err)
	s, err := sqlite.Open(db)
	require.NoError(t, err)
	live := store.Owner{ID: "live", PID: os.Getppid(), Host: host}
	require.NoError(t, s.Acquire(t.Context(), waiting, live, nil))
	require.NoError(t, s.Close())

	code, stdout, stderr := dagent(t, "", "runs", "prune", "--db", db, "--before", "1h")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `^deleted 0 runs of status completed, failed, waiting, replan_required, cancelled last updated before \S+ \S+ \S+ from `, stdout)
	assert.Len(t, runsOf(t, "--db", db), 3, "the runs are newer than an hour")

	code, stdout, stderr = dagent(t, "", "runs", "prune", "--db", db, "--before", "0s", "--dry-run")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "would delete "+before[1]["id"].(string)+"  failed, updated ")
	assert.Contains(t, stdout, "would delete "+before[2]["id"].(string)+"  completed, updated ")
	assert.NotContains(t, stdout, waiting, "the live run")
	assert.Len(t, runsOf(t, "--db", db), 3, "a dry run deletes nothing")

	code, stdout, stderr = dagent(t, "", "runs", "prune", "--db", db, "--before", "0s", "--status", "failed", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	var doc struct {
		DryRun  bool `json:"dry_run"`
		Deleted []struct {
			ID, Status string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Deleted, 1)
	assert.Equal(t, before[1]["id"], doc.Deleted[0].ID)
	assert.Equal(t, "failed", doc.Deleted[0].Status)
	left := runsOf(t, "--db", db)
	require.Len(t, left, 2)
	code, _, stderr = dagent(t, "", "show", doc.Deleted[0].ID, "--db", db)
	assert.Equal(t, exitUsage, code, "the run is gone with its tasks and events: %s", stderr)

	code, _, stderr = dagent(t, "", "runs", "prune", "--db", db, "--before", "0s")
	require.Equal(t, exitOK, code, stderr)
	left = runsOf(t, "--db", db)
	require.Len(t, left, 1)
	assert.Equal(t, waiting, left[0]["id"], "the live run is kept")

	for _, bad := range [][]string{{"--before", "soon"}, {"--before", "1h", "--status", "running"}, {}} {
		code, _, stderr = dagent(t, "", append([]string{"runs", "prune", "--db", db}, bad...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", bad, stderr)
	}
}

func TestCutoff(t *testing.T) {
	now := time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"72h", now.Add(-72 * time.Hour)},
		{"30d", now.AddDate(0, 0, -30)},
		{"0s", now},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local)},
		{"2026-11-01 15:04:05", time.Date(2026, 11, 1, 15, 4, 5, 0, time.Local)},
		{"2026-11-01T15:04:05Z", time.Date(2026, 11, 1, 15, 4, 5, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := cutoff(tt.in, now)
		require.NoError(t, err, tt.in)
		assert.True(t, tt.want.Equal(got), "%s: %s", tt.in, got)
	}
	for _, bad := range []string{"", "soon", "-3d", "-1h", "2026-13-01"} {
		_, err := cutoff(bad, now)
		assert.Error(t, err, bad)
	}
}

func TestCancelWithoutALiveOwner(t *testing.T) {
	db, waiting := journalOf(t)
	code, stdout, stderr := dagent(t, "", "cancel", waiting, "--db", db)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "run "+waiting+" cancelled; dagent resume "+waiting+" goes on with it\n", stdout)
	assert.Equal(t, "cancelled", runsOf(t, "--db", db, "--limit", "1")[0]["status"])

	code, _, stderr = dagent(t, "", "cancel", waiting, "--db", db)
	assert.Equal(t, exitInvalid, code)
	assert.Equal(t, "dagent: run "+waiting+" has ended (cancelled): there is nothing to cancel\n", stderr)

	// An interrupted run: its process died.
	host, err := os.Hostname()
	require.NoError(t, err)
	db, _ = crashedRun(t, "r1", &store.Owner{ID: "o", PID: gonePID(t), Host: host})
	code, stdout, stderr = dagent(t, "", "cancel", "r1", "--db", db, "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.JSONEq(t, `{"run_id": "r1", "status": "cancelled", "requested": false}`, stdout)
	code, _, stderr = dagent(t, "", "cancel", "nope", "--db", db)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no run nope in the journal")
}
