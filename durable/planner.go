package durable

import "github.com/dagent-dev/dagent/metaplanner"

// PlannerOptions are the options of a meta-planner with the settings of
// s: its corrections, its brief prompts, its temperature and, with
// PlanOnly, the routes it may not take. A run plans its mission and its
// repairs with them; a host that plans a mission itself, as a run would,
// adds its catalog ([metaplanner.WithRegistry]).
//
// The model is not among them: a run leaves it to its client, which
// [ClientFunc] is given it, so that the requests name none; a host whose
// client has no default adds [metaplanner.WithModel].
func (s LLMSpec) PlannerOptions() []metaplanner.Option {
	opts := []metaplanner.Option{metaplanner.WithMaxCorrections(s.MaxCorrections)}
	if s.Brief {
		opts = append(opts, metaplanner.WithBrief())
	}
	if t := s.Temperature; t != nil {
		opts = append(opts, metaplanner.WithTemperature(*t))
	}
	if s.PlanOnly {
		opts = append(opts, metaplanner.WithForbiddenRoutes(metaplanner.RouteSynthesis, metaplanner.RouteClarify))
	}
	return opts
}
