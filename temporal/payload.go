package temporal

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	sdk "go.temporal.io/sdk/temporal"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// PayloadLimit is the size Temporal refuses a payload above, by default:
// an activity's request or result, the workflow's input or result. A
// workflow task whose result exceeds it fails, and the server terminates
// the execution, every result with it.
const PayloadLimit = 2 << 20

// MaxOutputBytes bounds, in JSON bytes, an attempt's output on Temporal,
// and is the default bound of a task's request ([Input].MaxRequestBytes):
// both travel as payloads, with room left under [PayloadLimit] for the
// rest of the activity's request or reply.
const MaxOutputBytes = 1536 << 10

// maxResultBytes bounds the workflow's encoded result: PayloadLimit,
// less room for the payload's metadata.
const maxResultBytes = PayloadLimit - 16<<10

// requestBound is the bound of a task's request on Temporal: the input's
// when it is a smaller one, else MaxOutputBytes.
func requestBound(in int64) int64 {
	if in > 0 && in < MaxOutputBytes {
		return in
	}
	return MaxOutputBytes
}

// omitted is what stands for an output left out of the workflow's
// result.
func omitted(size int) string {
	return fmt.Sprintf("[dagent: output of %d bytes left out of the run's result, which would exceed Temporal's payload limit of %d bytes; the attempt's activity result in the workflow history holds it]", size, PayloadLimit)
}

// fit makes out fit in a payload: when its JSON form exceeds
// maxResultBytes, the largest outputs of tasks (the largest first, ties
// in id order) are replaced by a note saying so until it fits, so that
// the run keeps every other result, its statuses and its errors. A
// result that does not fit even so is a non-retryable error naming the
// limit, which fails the run cleanly rather than have the server
// terminate it.
//
// The size is counted, not encoded again for each output left out: the
// result without its large outputs is encoded once, and each of them
// once, which holds the workflow task for as little as can be.
func fit(out *Outcome) (*Outcome, error) {
	if out == nil || out.Run == nil {
		return out, nil
	}
	type sized struct {
		id     string
		n      int
		output any
	}
	var big []sized
	for _, id := range slices.Sorted(maps.Keys(out.Run.Tasks)) {
		t := out.Run.Tasks[id]
		if b, err := jsonv.Marshal(t.Output); err == nil && len(b) > 1<<10 {
			big = append(big, sized{id, len(b), t.Output})
			t.Output = nil
		}
	}
	size, err := encodedSize(out)
	if err != nil {
		return nil, err
	}
	for _, s := range big {
		size += s.n - len("null")
	}
	slices.SortStableFunc(big, func(a, b sized) int { return cmp.Compare(b.n, a.n) })
	for _, s := range big {
		if size <= maxResultBytes {
			out.Run.Tasks[s.id].Output = s.output
			continue
		}
		note := omitted(s.n)
		out.Run.Tasks[s.id].Output = note
		size -= s.n - len(note) - len(`""`)
	}
	if size <= maxResultBytes {
		return out, nil
	}
	err = fmt.Errorf("the run's result is %d bytes as JSON, above Temporal's payload limit of %d bytes even without its large outputs", size, PayloadLimit)
	return nil, sdk.NewNonRetryableApplicationError(err.Error(), "ResultTooLarge", err)
}

// encodedSize is the size of out's JSON form, as the workflow's data
// converter encodes it.
func encodedSize(out *Outcome) (int, error) {
	b, err := out.MarshalJSON()
	if err != nil {
		return 0, fmt.Errorf("result: %w", err)
	}
	return len(b), nil
}

// outputBound is the error of an attempt whose output, raw, exceeds
// MaxOutputBytes; nil when it fits.
func outputBound(raw []byte) error {
	if len(raw) <= MaxOutputBytes {
		return nil
	}
	return fmt.Errorf("the output is %d bytes as JSON, above the %d bytes a run on Temporal takes (its payload limit is %d): write big data to storage and output a reference", len(raw), MaxOutputBytes, PayloadLimit)
}
