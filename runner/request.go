package runner

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dagent-dev/dagent/plan"
)

// checkRequest refuses a request of task t larger than the runner's bound,
// before it is built: held whole, sent to a worker or shown to a model, the
// outputs of a wide fan-in would cost memory the host may not have.
func (c *core) checkRequest(j *carry, t *plan.Task) error {
	limit := c.conf.maxRequest
	if limit == 0 {
		limit = DefaultMaxRequestBytes
	}
	if limit < 0 {
		return nil
	}
	n := int64(len(j.input) + len(t.OutputSchema))
	if j.refs != nil {
		n += int64(len(t.Input)) // the template, sent beside its values
	}
	for _, m := range []map[string]any{j.refs, j.depends, j.inputs, t.Params} {
		if n += jsonSize(m, limit-n); n > limit {
			return fmt.Errorf("%w: the request of task %q is over %d bytes, the limit: its dependencies' outputs, inputs and templates carry too much", ErrRequestTooLarge, t.ID, limit)
		}
	}
	return nil
}

// jsonSize is about the size of v's compact JSON: escapes are not counted.
// It stops counting once over budget.
func jsonSize(v any, budget int64) int64 {
	switch c := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(c)) + 2
	case json.Number:
		return int64(len(c))
	case bool:
		return 5
	case float64:
		var buf [32]byte
		return int64(len(strconv.AppendFloat(buf[:0], c, 'g', -1, 64)))
	case int, int64:
		return 20
	case map[string]any:
		n := int64(2)
		for k, x := range c {
			if n > budget {
				break
			}
			n += int64(len(k)) + 4 + jsonSize(x, budget-n)
		}
		return n
	case []any:
		n := int64(2)
		for _, x := range c {
			if n > budget {
				break
			}
			n += 1 + jsonSize(x, budget-n)
		}
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return int64(len(b))
}
