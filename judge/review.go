package judge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
)

// ReviewCheck is the check of every issue a [Reviewer] finds.
const ReviewCheck = "llm_review"

// ReviewSchemaName is the name of the structured output a [Reviewer] asks
// for.
const ReviewSchemaName = "plan_review"

// MaxReviewIssues bounds the issues a [Reviewer] keeps of one answer.
const MaxReviewIssues = 20

// reviewSchema is the JSON Schema of a review: findings in the critic's
// shape, at most warnings.
const reviewSchema = `{"type":"object","properties":{"issues":{"type":"array","items":{"type":"object","properties":{` +
	`"severity":{"type":"string","enum":["warning","info"]},` +
	`"task_id":{"type":"string","description":"the task the issue is about; empty for the plan as a whole"},` +
	`"field":{"type":"string","description":"the task's field the issue is about, e.g. input or verification; may be empty"},` +
	`"message":{"type":"string"},` +
	`"recommendation":{"type":"string","description":"how to fix it"}},` +
	`"required":["severity","task_id","field","message","recommendation"],"additionalProperties":false}}},` +
	`"required":["issues"],"additionalProperties":false}`

const reviewPrompt = `You review a plan that an execution engine will run: tasks, each done by an agent, with dependencies, failure policies and verification predicates. Static checks have reviewed it already; their findings are given, so do not repeat them. Look for what they cannot see: a task whose input does not serve the mission, a step missing between two tasks, a verification that does not check what the task is for, work done twice, a dependency that is missing or needless.

` + llm.DataRules + `

Answer with one JSON object and nothing else: {"issues": [{"severity": "warning" or "info", "task_id": "...", "field": "...", "message": "...", "recommendation": "..."}]}. A warning is a flaw that will likely make the plan fail or waste work; an info is worth a look. Report only real flaws, at most 10; an empty list is a fine answer for a sound plan.`

// Reviewer is a [critic.Reviewer] that asks an LLM for the findings the
// static checks cannot make. Its issues have the check [ReviewCheck] and
// are warnings or infos, never critical: critical is for what is certain,
// and a model's reading is not. It is safe for concurrent use when its
// client is. Create it with [NewReviewer].
type Reviewer struct {
	client llm.Client
	c      config
}

var _ critic.Reviewer = (*Reviewer)(nil)

// NewReviewer returns a [Reviewer] that asks c.
func NewReviewer(c llm.Client, opts ...Option) *Reviewer {
	return &Reviewer{client: c, c: newConfig(opts)}
}

// reviewIssue is one finding of the structured output.
type reviewIssue struct {
	Severity       string `json:"severity"`
	TaskID         string `json:"task_id"`
	Field          string `json:"field"`
	Message        string `json:"message"`
	Recommendation string `json:"recommendation"`
}

// Review asks the model for findings on p that static does not hold. The
// plan and the static findings are sent as data blocks, as the plan's
// text is a model's. An issue about a task p does not have is kept as an
// issue of the plan; at most [MaxReviewIssues] are kept. An answer that is
// not a review is sent back to be corrected ([WithMaxCorrections]); when no
// answer is, the error matches [ErrInvalidAnswer].
func (r *Reviewer) Review(ctx context.Context, p *plan.Plan, static critic.Report) ([]critic.Issue, error) {
	canon, err := p.Canonical()
	if err != nil {
		return nil, fmt.Errorf("judge: plan: %w", err)
	}
	var b strings.Builder
	b.WriteString("The plan:\n")
	llm.WriteData(&b, "plan", string(canon), r.c.maxData)
	b.WriteString("\nThe static checks' findings:\n")
	var found strings.Builder
	for _, is := range static.Issues {
		found.WriteString(is.String() + "\n")
	}
	if found.Len() == 0 {
		found.WriteString("none\n")
	}
	llm.WriteData(&b, "static_review", found.String(), r.c.maxData)
	tasks := make(map[string]bool, len(p.Tasks))
	for _, t := range p.Tasks {
		tasks[t.ID] = true
	}
	var issues []critic.Issue
	_, err = ask(ctx, r.client, r.c, reviewPrompt, b.String(), ReviewSchemaName, reviewSchema, func(raw []byte) error {
		var doc struct {
			Issues *[]reviewIssue `json:"issues"`
		}
		if err := strictDecode(raw, &doc); err != nil {
			return err
		}
		if doc.Issues == nil {
			return errors.New(`"issues" is missing; it must be a list, empty for a sound plan`)
		}
		issues = issues[:0]
		for _, is := range *doc.Issues {
			if strings.TrimSpace(is.Message) == "" {
				continue
			}
			sev := critic.Info
			if strings.EqualFold(strings.TrimSpace(is.Severity), string(critic.Warning)) {
				sev = critic.Warning
			}
			id := strings.TrimSpace(is.TaskID)
			if !tasks[id] {
				id = ""
			}
			issues = append(issues, critic.Issue{
				Check: ReviewCheck, Severity: sev, TaskID: id, Field: strings.TrimSpace(is.Field),
				Message: strings.TrimSpace(is.Message), Recommendation: strings.TrimSpace(is.Recommendation),
			})
			if len(issues) == MaxReviewIssues {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return issues, nil
}
