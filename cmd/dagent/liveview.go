package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
	"github.com/muesli/termenv"
)

// liveView shows a run on a terminal with bubbletea, inline (the
// terminal's scrollback is kept): what happened scrolls by above, and
// below it the tasks running now, each with its time so far, under a line
// of counts. It reads no input and handles no signal, so that Ctrl-C
// reaches dagent as without it. Every text of the run in it is made
// visible: the view writes to the terminal itself, not through the
// command's visible writer.
type liveView struct {
	prog    *tea.Program
	started sync.Once
	done    chan struct{}
	style   *liveModel // its styles only: the model itself is bubbletea's
	start   time.Time
}

func newLiveView(w io.Writer, runID string, colour bool) *liveView {
	// w is a terminal (the live view is shown on nothing else), so the
	// colours follow TERM: termenv would otherwise drop them whenever CI is
	// set, and a live view on a CI runner's terminal would lose its colour
	// but not its redraws.
	r := lipgloss.NewRenderer(w, termenv.WithTTY(true))
	if !colour {
		r.SetColorProfile(termenv.Ascii)
	}
	m := &liveModel{
		runID:   prose.Visible(runID),
		start:   time.Now(),
		running: map[string]time.Time{},
		dim:     r.NewStyle().Faint(true),
		ok:      r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:     r.NewStyle().Foreground(lipgloss.Color("1")),
		busy:    r.NewStyle().Foreground(lipgloss.Color("3")),
	}
	v := &liveView{done: make(chan struct{}), style: m, start: m.start}
	v.prog = tea.NewProgram(m, tea.WithOutput(w), tea.WithInput(nil), tea.WithoutSignalHandler())
	return v
}

// run starts the view, with the run's first event: a command that fails
// before it leaves the terminal as it was (bubbletea hides the cursor
// while it runs).
func (v *liveView) run() {
	go func() {
		defer close(v.done)
		v.prog.Run() // an error leaves the terminal as bubbletea restored it; the summary follows
	}()
}

// Observe prints e's line above the view and gives e to the view. The
// line goes to the program as a message too, so the lines keep the order
// of the events (a bubbletea command would print it from a goroutine of
// its own).
func (v *liveView) Observe(e runner.Event) {
	v.started.Do(v.run)
	if e.Kind == runner.EventRunStarted {
		v.start = e.Time
	}
	if line, ok := v.line(e); ok {
		v.prog.Println(line)
	}
	v.prog.Send(e)
}

// line is e's line above the view, if it has one: task starts and phases
// show in the view itself.
func (v *liveView) line(e runner.Event) (string, bool) {
	switch e.Kind {
	case runner.EventRunStarted, runner.EventPhaseStarted, runner.EventPhaseFinished, runner.EventTaskStarted, executor.EventHalted:
		return "", false
	}
	line := prose.Visible(eventLine(e))
	switch e.Kind {
	case runner.EventTaskFinished:
		line = v.style.ok.Render("✓") + " " + line
	case runner.EventTaskFailed, executor.EventReplanFailed:
		line = v.style.bad.Render("✗") + " " + line
	default:
		line = "  " + line
	}
	return v.style.dim.Render(fmt.Sprintf("%8s", progress.Round(e.Time.Sub(v.start)))) + " " + line, true
}

// stop draws the last frame, the counts, and waits for the view to end.
func (v *liveView) stop() {
	never := false
	v.started.Do(func() { never = true })
	if never {
		return
	}
	v.prog.Send(stopMsg{})
	<-v.done
}

type (
	stopMsg struct{}
	tickMsg struct{}
)

type liveModel struct {
	runID                       string
	start                       time.Time
	running                     map[string]time.Time
	done, failed, skipped, wait int
	status                      runner.Status
	stopped                     bool
	dim, ok, bad, busy          lipgloss.Style
}

func tick() tea.Cmd {
	return tea.Tick(200*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *liveModel) Init() tea.Cmd { return tick() }

func (m *liveModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case stopMsg:
		m.stopped = true
		return m, tea.Quit
	case tickMsg:
		return m, tick()
	case runner.Event:
		m.observe(msg)
	}
	return m, nil
}

// observe counts e.
func (m *liveModel) observe(e runner.Event) {
	switch e.Kind {
	case runner.EventRunStarted:
		m.start = e.Time
	case runner.EventTaskStarted:
		m.running[e.TaskID] = e.Time
	case runner.EventTaskFinished:
		m.done++
		delete(m.running, e.TaskID)
	case runner.EventTaskFailed:
		m.failed++
		delete(m.running, e.TaskID)
	case runner.EventTaskSkipped:
		m.skipped++
		delete(m.running, e.TaskID)
	case runner.EventTaskWaiting:
		m.wait++
		delete(m.running, e.TaskID)
	case runner.EventRunFinished:
		m.status = e.Status
		clear(m.running)
	}
}

func (m *liveModel) View() string {
	var b strings.Builder
	counts := []string{m.ok.Render(fmt.Sprintf("%d done", m.done))}
	if m.failed > 0 {
		counts = append(counts, m.bad.Render(fmt.Sprintf("%d failed", m.failed)))
	}
	if m.skipped > 0 {
		counts = append(counts, fmt.Sprintf("%d skipped", m.skipped))
	}
	if m.wait > 0 {
		counts = append(counts, fmt.Sprintf("%d waiting", m.wait))
	}
	if len(m.running) > 0 {
		counts = append(counts, m.busy.Render(fmt.Sprintf("%d running", len(m.running))))
	}
	state := "running"
	if m.status != "" {
		state = string(m.status)
	}
	fmt.Fprintf(&b, "run %s %s · %s · %s\n", m.runID, state, strings.Join(counts, " · "), elapsed(time.Since(m.start)))
	if m.stopped {
		return b.String()
	}
	now := time.Now()
	ids := make([]string, 0, len(m.running))
	for id := range m.running {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return m.running[a].Compare(m.running[b]) })
	for _, id := range ids {
		fmt.Fprintf(&b, "  %s %s %s\n", m.busy.Render("●"), prose.Visible(id), m.dim.Render(elapsed(now.Sub(m.running[id]))))
	}
	return b.String()
}

// elapsed is a time so far as the view shows it, steady as it grows: to
// a tenth of a second below a minute ("4.2s"), then to the second.
func elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
