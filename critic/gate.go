package critic

import "fmt"

// Gate says which reports refuse their plan: a gate at a severity refuses
// a plan with an issue of that severity or worse, and [GateNever] refuses
// none. The zero Gate is [GateCritical], so that a host that sets no gate
// refuses exactly the plans that cannot run as written.
type Gate string

// Gates, from the most lenient.
const (
	// GateNever refuses no plan for its findings. A plan that cannot run
	// at all (a cycle, a missing dependency) is still not run by a runner,
	// which runs only a plan whose check passed.
	GateNever Gate = "never"
	// GateCritical refuses a plan with a critical issue: one that cannot
	// run as written. It is the default.
	GateCritical Gate = "critical"
	// GateWarning refuses a plan with a warning too: the strict setting
	// of a CI job that wants no heuristic to fire.
	GateWarning Gate = "warning"
	// GateInfo refuses a plan with any issue.
	GateInfo Gate = "info"
)

// ParseGate reads never, critical, warning or info; the empty string
// reads as [GateCritical].
func ParseGate(s string) (Gate, error) {
	switch g := Gate(s); g {
	case "":
		return GateCritical, nil
	case GateNever, GateCritical, GateWarning, GateInfo:
		return g, nil
	}
	return "", fmt.Errorf("unknown gate %q; use critical, warning, info or never", s)
}

// Refuses reports whether r holds an issue at g's severity or worse. A
// gate that is not one of the Gate constants refuses like [GateCritical].
func (g Gate) Refuses(r *Report) bool {
	s := g.Severity()
	return s != "" && r.Has(s)
}

// Severity is the least severity g refuses a plan for; empty for
// [GateNever]. A gate that is not one of the Gate constants is
// [GateCritical].
func (g Gate) Severity() Severity {
	switch g {
	case GateNever:
		return ""
	case GateWarning:
		return Warning
	case GateInfo:
		return Info
	}
	return Critical
}
