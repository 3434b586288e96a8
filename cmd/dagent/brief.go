package main

import (
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
)

// briefHint adds to err, when the planner's prompt did not fit in the
// model's context and --brief was not given, that --brief shortens it. A
// task's own overflow is left as it is: --brief changes only the planner's
// prompts.
func briefHint(err error, brief bool) error {
	var task *runner.TaskError
	if brief || !errors.Is(err, llm.ErrContextOverflow) || errors.As(err, &task) {
		return err
	}
	return fmt.Errorf("%w (try --brief: it gives the planner short prompts, for models with a small context)", err)
}
