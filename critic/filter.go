package critic

import "slices"

// Without returns the report without the issues drop reports, its score,
// summary and recommendations those of the issues left: what a linter
// prints once its configuration silenced some checks. r is not changed.
func (r Report) Without(drop func(Issue) bool) Report {
	out := Report{Issues: slices.DeleteFunc(slices.Clone(r.Issues), drop)}
	out.finish()
	if r.Summary == NoPlan {
		// Nothing can run, whatever was silenced.
		out.Score, out.Summary = 1, NoPlan
	}
	return out
}
