//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalProcesses runs dagent as real processes on one journal: killed
// at random and resumed, side by side, and interrupted.
func TestJournalProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dagent and runs it as processes; skipped with -short")
	}
	bin := binary(t)

	t.Run("crash", func(t *testing.T) { testCrashes(t, bin) })
	t.Run("replan crash", func(t *testing.T) { testReplanCrashes(t, bin) })
	t.Run("concurrent", func(t *testing.T) { testConcurrentRuns(t, bin) })
	t.Run("interrupt", func(t *testing.T) { testInterrupt(t, bin) })
	t.Run("early kill", func(t *testing.T) { testEarlyKills(t, bin) })
	t.Run("two resumes", func(t *testing.T) { testTwoResumes(t, bin) })
}

// phasedPlan is a plan of 12 work tasks in 4 phases of 3: each task of a
// phase reads the outputs of two tasks of the phase before, so that a
// wrong or missing output upstream changes every output downstream. Each
// task sleeps a random 20-80 ms.
func phasedPlan(rng *rand.Rand) string {
	var tasks []string
	for k := range 4 {
		for j := range 3 {
			id := fmt.Sprintf("t%d_%d", k, j)
			deps, input := "[]", "start "+id
			if k > 0 {
				a, b := fmt.Sprintf("t%d_%d", k-1, j), fmt.Sprintf("t%d_%d", k-1, (j+1)%3)
				deps = fmt.Sprintf("[%q, %q]", a, b)
				input = fmt.Sprintf("%s from {{results.%s.v}} and {{results.%s.v}}", id, a, b)
			}
			tasks = append(tasks, fmt.Sprintf(`{"id": %q, "agent": "work", "depends_on": %s, "input": %q, "params": {"ms": %d}}`,
				id, deps, input, 20+rng.IntN(61)))
		}
	}
	return `{"mission": "Twelve steps", "tasks": [` + strings.Join(tasks, ",\n") + `]}`
}

// outputsOf are the outputs of a run's done tasks, as JSON text.
func outputsOf(t *testing.T, rec *store.Record) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, task := range rec.Tasks {
		if task.Status == "done" {
			out[id] = string(compact(task.Output))
		}
	}
	return out
}

// checkDB runs SQLite's integrity check on the journal and loads the run
// id (nil when it is not in the journal).
func checkDB(t *testing.T, db, id string) *store.Record {
	t.Helper()
	s, err := sqlite.Open(db)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Check(t.Context()), "PRAGMA integrity_check")
	rec, err := s.Load(t.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	require.NoError(t, err)
	return rec
}

// awaitJournaled waits until run id is in the journal db, reading it as
// the readers do, beside the process that writes it.
func awaitJournaled(t *testing.T, db, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s, err := sqlite.Open(db, sqlite.ReadOnly()); err == nil {
			_, err = s.Load(t.Context(), id)
			s.Close()
			if err == nil {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("run %s was not journaled within 30s", id)
}

// snapshot is the state after a kill: the tasks committed, and how long
// the side-effect log was.
type snapshot struct {
	committed map[string]bool
	logLen    int
}

// testCrashes kills dagent run, then dagent resume, with SIGKILL at random
// moments until the run completes, in cycles of fresh runs until there
// have been at least 20 kills, and checks the run against an uninterrupted
// one.
func testCrashes(t *testing.T, bin string) {
	rng := rand.New(rand.NewPCG(20251122, 7))
	crashCycles(t, bin, rng, crashCase{plan: phasedPlan(rng), tasks: 12, minKills: 20})
}

// testReplanCrashes kills a run that replans — dagent run --replan, whose
// first plan has a task that fails and asks for a repair — and its
// resumes, with SIGKILL at random moments, until there have been at least
// 20 kills, 8 of them after the repair plan was journaled; each run must
// complete with the outputs of an uninterrupted one, no finished task run
// again.
func testReplanCrashes(t *testing.T, bin string) {
	rng := rand.New(rand.NewPCG(20261124, 12))
	var p struct {
		Mission string           `json:"mission"`
		Tasks   []map[string]any `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(phasedPlan(rng)), &p))
	tail := append([]map[string]any{}, p.Tasks...)
	p.Tasks = append(p.Tasks, map[string]any{"id": "flaky", "agent": "fail", "input": "try", "on_failure": "replan"})
	first, err := json.Marshal(p)
	require.NoError(t, err)
	p.Tasks = append(tail, map[string]any{"id": "fixed", "agent": "work", "input": "instead of flaky", "depends_on": []string{"t0_0"}})
	repair, err := json.Marshal(map[string]any{"route": "plan", "plan": p})
	require.NoError(t, err)
	f := startLLM(t, script{kindRepair: {string(repair)}})
	crashCycles(t, bin, rng, crashCase{plan: string(first), tasks: 13, minKills: 20, minRepairKills: 8, args: []string{"--replan"}})
	t.Logf("%d repair requests to the model", len(f.got(kindRepair)))
}

// crashCase is a plan to crash: its JSON, the tasks done when it completes,
// the flags of dagent run, and how many kills to reach, in all and after a
// repair plan was journaled.
type crashCase struct {
	plan                     string
	tasks                    int
	args                     []string
	minKills, minRepairKills int
}

func crashCycles(t *testing.T, bin string, rng *rand.Rand, c crashCase) {
	dir := t.TempDir()
	reg, log := workRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(c.plan), 0o600))
	runArgs := func(db, id string) []string {
		return append([]string{"run", planPath, "--registry", reg, "--db", db, "--run-id", id}, c.args...)
	}

	// The outputs of an uninterrupted run.
	whole := exec.Command(bin, runArgs(filepath.Join(dir, "whole.db"), "whole")...)
	out, err := whole.CombinedOutput()
	require.NoError(t, err, "%s", out)
	want := outputsOf(t, checkDB(t, filepath.Join(dir, "whole.db"), "whole"))
	require.Len(t, want, c.tasks)

	db := filepath.Join(dir, "crash.db")
	kills, repairKills, launches, start := 0, 0, 0, time.Now()
	for cycle := 1; kills < c.minKills || repairKills < c.minRepairKills; cycle++ {
		require.Less(t, cycle, 50, "too few kills after 50 runs")
		id := fmt.Sprintf("crash-%d", cycle)
		var snaps []snapshot
		for attempt := 0; ; attempt++ {
			require.Less(t, attempt, 100, "run %s never completed", id)
			args := []string{"resume", id, "--db", db}
			if checkDB(t, db, id) == nil {
				// Killed before the run was journaled: start it again.
				args = runArgs(db, id)
			}
			var output bytes.Buffer
			cmd := exec.Command(bin, args...)
			cmd.Stdout, cmd.Stderr = &output, &output
			require.NoError(t, cmd.Start())
			launches++
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			timer := time.NewTimer(time.Duration(10+rng.IntN(391)) * time.Millisecond)
			var werr error
			killed := false
			select {
			case werr = <-done:
				timer.Stop()
			case <-timer.C:
				killed = cmd.Process.Signal(syscall.SIGKILL) == nil
				werr = <-done
			}
			var exit *exec.ExitError
			if killed && errors.As(werr, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() {
				kills++
				// On Linux the workers die with the killed process; where
				// nothing kills them they live on (in process groups of
				// their own) and finish their attempt: let them, so that
				// their side effects are in the log before its length is
				// taken.
				waitWorkers(t, filepath.Join(dir, "work.sh"))
				rec := checkDB(t, db, id)
				s := snapshot{committed: map[string]bool{}, logLen: len(sideEffects(t, log))}
				if rec != nil {
					for tid, task := range rec.Tasks {
						s.committed[tid] = task.Status == "done"
					}
					if len(rec.Plans) > 1 {
						repairKills++
					}
				}
				snaps = append(snaps, s)
				continue
			}
			require.NoError(t, werr, "%s %s:\n%s", bin, strings.Join(args, " "), output.String())
			break // completed
		}

		rec := checkDB(t, db, id)
		require.NotNil(t, rec)
		assert.Equal(t, "completed", rec.Status, id)
		assert.Equal(t, want, outputsOf(t, rec), "run %s: the outputs of an uninterrupted run", id)
		if c.minRepairKills > 0 {
			assert.Len(t, rec.Plans, 2, "run %s: the first plan and its one repair", id)
		}

		// No task done by a kill ran again: after each kill, the log holds
		// no delivery of a task the journal held as done by then.
		effects := sideEffects(t, log)
		for k, s := range snaps {
			for _, e := range effects[s.logLen:] {
				if strings.HasPrefix(e[1], id+"/") || strings.HasPrefix(e[1], id+".") {
					assert.False(t, s.committed[e[0]], "run %s: task %s ran again after kill %d, though done", id, e[0], k+1)
				}
			}
		}
		// Every task ran at least once, and every delivery of it — the
		// first, and those that ran again because it was in flight at a
		// kill — carried the key of its first attempt in the run of its
		// plan version: the run's id, or id.1 for the repair's run.
		runs := map[string]int{}
		for _, e := range effects {
			if strings.HasPrefix(e[1], id+"/") || strings.HasPrefix(e[1], id+".") {
				runs[e[0]]++
				keys := []string{id + "/" + e[0] + "/1"}
				if c.minRepairKills > 0 {
					keys = append(keys, id+".1/"+e[0]+"/1")
				}
				assert.Contains(t, keys, e[1], "run %s: the idempotency key of %s", id, e[0])
			}
		}
		assert.Len(t, runs, c.tasks, "run %s: every task ran", id)
		again := 0
		for _, n := range runs {
			again += n - 1
		}
		t.Logf("run %s: completed after %d kills in all so far (%d after a repair was journaled); %d deliveries ran again (in flight at a kill)", id, kills, repairKills, again)
	}
	t.Logf("%d kills (%d after a repair was journaled), %d processes in %s", kills, repairKills, launches, time.Since(start).Round(time.Millisecond))
}

// testConcurrentRuns runs four dagent processes on one journal at once.
func testConcurrentRuns(t *testing.T, bin string) {
	dir := t.TempDir()
	reg, _ := workRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(phasedPlan(rand.New(rand.NewPCG(1, 2)))), 0o600))
	db := filepath.Join(dir, "shared.db")

	const n = 4
	cmds := make([]*exec.Cmd, n)
	outputs, progress := make([]bytes.Buffer, n), make([]bytes.Buffer, n)
	for i := range cmds {
		cmds[i] = exec.Command(bin, "run", planPath, "--registry", reg, "--db", db, "--format", "json", "--concurrency", "3")
		// The JSON result on standard output, the progress on standard error.
		cmds[i].Stdout, cmds[i].Stderr = &outputs[i], &progress[i]
	}
	start := time.Now()
	for _, c := range cmds {
		require.NoError(t, c.Start())
	}
	var ids []string
	for i, c := range cmds {
		require.NoError(t, c.Wait(), "%s%s", outputs[i].String(), progress[i].String())
		var doc struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(outputs[i].Bytes(), &doc), outputs[i].String())
		assert.Equal(t, "completed", doc.Status)
		ids = append(ids, doc.RunID)
	}
	t.Logf("%d concurrent runs in %s", n, time.Since(start).Round(time.Millisecond))

	var want map[string]string
	for _, id := range ids {
		rec := checkDB(t, db, id)
		require.NotNil(t, rec, id)
		assert.Equal(t, "completed", rec.Status)
		got := outputsOf(t, rec)
		assert.Len(t, got, 12)
		if want == nil {
			want = got
		}
		assert.Equal(t, want, got, "every run has the same outputs")
		assert.Equal(t, "run_finished", rec.Events[len(rec.Events)-1].Kind)
	}
	slices.Sort(ids)
	assert.Len(t, slices.Compact(ids), n, "four runs")
}

// testInterrupt interrupts a run with SIGINT or SIGTERM while a task runs:
// the run is journaled as cancelled, its process exits 128 plus the
// signal's number and says on stderr how to resume it; a resume finishes
// it, without running the finished task again.
func testInterrupt(t *testing.T, bin string) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) { testInterruptBy(t, bin, tt.sig, tt.code) })
	}
}

func testInterruptBy(t *testing.T, bin string, sig syscall.Signal, code int) {
	dir := t.TempDir()
	reg, log := workRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(`{"tasks": [
		{"id": "a", "agent": "work", "input": "start"},
		{"id": "b", "agent": "work", "depends_on": ["a"], "input": "slow", "params": {"ms": 900}},
		{"id": "c", "agent": "work", "depends_on": ["b"], "input": "after {{results.b.v}}"}]}`), 0o600))
	db := filepath.Join(dir, "runs.db")

	cmd := exec.Command(bin, "run", planPath, "--registry", reg, "--db", db)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	require.True(t, sc.Scan())
	id, ok := strings.CutPrefix(sc.Text(), "run ")
	require.True(t, ok, "the first line names the run: %q", sc.Text())
	// The progress is on standard error, and then how to resume.
	var lines, errLines []string
	for esc := bufio.NewScanner(stderr); esc.Scan(); {
		errLines = append(errLines, esc.Text())
		if strings.HasSuffix(esc.Text(), "b: started") {
			require.NoError(t, cmd.Process.Signal(sig))
		}
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s\n%s", strings.Join(lines, "\n"), strings.Join(errLines, "\n"))
	assert.Equal(t, code, exit.ExitCode(), "a run a signal interrupted exits 128 plus its number")
	require.NotEmpty(t, errLines)
	assert.Equal(t, "dagent: to resume the run: dagent resume "+id, errLines[len(errLines)-1])
	assert.Equal(t, 1, strings.Count(strings.Join(errLines, "\n"), "dagent resume"), "said once")

	rec := checkDB(t, db, id)
	require.NotNil(t, rec)
	assert.Equal(t, statusCancelled, rec.Status)
	assert.Contains(t, rec.Error, sig.String())
	assert.Equal(t, "done", rec.Tasks["a"].Status)
	_, committed := rec.Tasks["b"]
	assert.False(t, committed, "the cancelled task has no final state")

	out, err := exec.Command(bin, "resume", id, "--db", db).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "completed", checkDB(t, db, id).Status)
	var tasks []string
	for _, e := range sideEffects(t, log) {
		tasks = append(tasks, e[0])
	}
	assert.Equal(t, "a", tasks[0])
	assert.Equal(t, 1, strings.Count(strings.Join(tasks, " "), "a"), "a ran once: %v", tasks)
	assert.Equal(t, "c", tasks[len(tasks)-1])
}

// testEarlyKills kills dagent run 0-30 ms after it starts, while it
// starts the run: whenever a worker started (the side-effect log holds a
// delivery of the run) or the run's id was printed, the run is in the
// journal.
func testEarlyKills(t *testing.T, bin string) {
	rng := rand.New(rand.NewPCG(20261124, 30))
	dir := t.TempDir()
	reg, log := workRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(phasedPlan(rng)), 0o600))
	db := filepath.Join(dir, "early.db")
	const kills = 60
	started, printed := 0, 0
	for i := range kills {
		id := fmt.Sprintf("early-%d", i)
		var stdout bytes.Buffer
		cmd := exec.Command(bin, "run", planPath, "--registry", reg, "--db", db, "--run-id", id)
		cmd.Stdout = &stdout
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(rng.IntN(31)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		waitWorkers(t, filepath.Join(dir, "work.sh"))
		rec := checkDB(t, db, id)
		ran := slices.ContainsFunc(sideEffects(t, log), func(e [2]string) bool { return strings.HasPrefix(e[1], id+"/") })
		said := strings.HasPrefix(stdout.String(), "run "+id+"\n")
		if ran {
			started++
			assert.NotNil(t, rec, "kill %d: workers of run %s started, and the run is not in the journal", i, id)
		}
		if said {
			printed++
			assert.NotNil(t, rec, "kill %d: the id of run %s was printed, and the run is not in the journal", i, id)
		}
	}
	t.Logf("%d early kills: workers had started in %d, the id was printed in %d", kills, started, printed)
}

// testTwoResumes kills a run, then resumes it with two dagent resume
// processes at once: one runs it, the other is refused, naming the owner
// (or, when it comes second, finds the run completed), and no task runs
// twice after the kill.
func testTwoResumes(t *testing.T, bin string) {
	rng := rand.New(rand.NewPCG(20261124, 2))
	dir := t.TempDir()
	reg, log := workRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(phasedPlan(rng)), 0o600))
	db := filepath.Join(dir, "two.db")
	refusals := 0
	for cycle := range 5 {
		id := fmt.Sprintf("two-%d", cycle)
		cmd := exec.Command(bin, "run", planPath, "--registry", reg, "--db", db, "--run-id", id)
		require.NoError(t, cmd.Start())
		// Killed once it is journaled (an earlier kill is the early-kill
		// test's), at a random moment of its first phases.
		awaitJournaled(t, db, id)
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		waitWorkers(t, filepath.Join(dir, "work.sh"))
		rec := checkDB(t, db, id)
		require.NotNil(t, rec, "run %s is journaled", id)
		before := len(sideEffects(t, log))

		var outputs [2]bytes.Buffer
		var resumes [2]*exec.Cmd
		for i := range resumes {
			resumes[i] = exec.Command(bin, "resume", id, "--db", db)
			resumes[i].Stdout, resumes[i].Stderr = &outputs[i], &outputs[i]
		}
		for _, c := range resumes {
			require.NoError(t, c.Start())
		}
		ran := 0
		for i, c := range resumes {
			err := c.Wait()
			var exit *exec.ExitError
			switch {
			case err == nil:
				ran++
			case errors.As(err, &exit) && exit.ExitCode() == exitUsage && strings.Contains(outputs[i].String(), "is being run by process"):
				refusals++
			default:
				t.Fatalf("resume %d of %s: %v:\n%s", i, id, err, outputs[i].String())
			}
		}
		assert.GreaterOrEqual(t, ran, 1, "run %s: a resume ran it", id)
		rec = checkDB(t, db, id)
		assert.Equal(t, "completed", rec.Status, id)
		assert.Nil(t, rec.Owner, "run %s: the lease is given up", id)
		runs := map[string]int{}
		for _, e := range sideEffects(t, log)[before:] {
			if strings.HasPrefix(e[1], id+"/") {
				runs[e[0]]++
			}
		}
		for task, n := range runs {
			assert.Equal(t, 1, n, "run %s: task %s ran %d times after the kill", id, task, n)
		}
	}
	t.Logf("5 runs resumed twice at once: %d resumes refused", refusals)
}

// waitWorkers waits until no process runs the worker script (read from
// /proc; where there is none, it waits longer than a worker sleeps).
func waitWorkers(t *testing.T, script string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		time.Sleep(200 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		running := false
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(script)) {
				running = true
				break
			}
		}
		if !running {
			return
		}
		require.True(t, time.Now().Before(deadline), "workers of a killed dagent still run after 10s")
		time.Sleep(5 * time.Millisecond)
	}
}
