// Package web is the web view of a dagent journal: an [http.Handler] that
// shows the runs of a [store.Store] as they happen, the graph, tasks and
// timeline of each run, the pending reviews of a waiting run with a form
// that decides them, and a plan checker that reviews a plan with the
// critic and draws it.
//
// The pages read the journal, which other processes write: a run that a
// dagent run in another process journals shows up, and changes state, live,
// over server-sent events. A decision made on a review's form resumes the
// run in the server's process, through [Options.Decide], and the page
// follows it. Its pages, scripts and styles are embedded: the server needs
// nothing else.
//
// The events the journal gets while the server runs go to
// [Options.Observer]: given package telemetry's observer on a Prometheus
// exporter, served as [Options.Metrics], the server's /metrics counts and
// times the runs of every process that writes the journal.
//
// The server is safe by default. It refuses to listen beyond loopback
// without a token ([ErrNoToken]); with one, every request must carry it.
// A request addressed to a host name that is not the server's is refused,
// which defeats DNS rebinding. A request that changes state must be a POST
// from one of the server's own pages: same origin, with the CSRF token of
// its session. Text from the journal — outputs, inputs, errors, ids — is
// escaped wherever it is shown, and a strict Content-Security-Policy lets
// a page run only the server's own script.
package web
