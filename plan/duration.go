package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// unitWords are the spelled-out units LLMs write ("30 seconds", "2 min").
var unitWords = map[string]time.Duration{
	"ms": time.Millisecond, "msec": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
}

// parseDuration reads a timeout: Go syntax ("30s", "1m30s", "500ms") or a
// number and a unit word ("30 seconds", "2 min"). A bare number other than
// 0 is refused: whether 30 means seconds or milliseconds would be a guess.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		d, err = parseWords(s)
	}
	if err != nil {
		return 0, fmt.Errorf("timeout %q is not a duration; write it with a unit, e.g. \"30s\", \"2m\" or \"1h30m\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("timeout %q is negative", s)
	}
	return d, nil
}

func parseWords(s string) (time.Duration, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, strconv.ErrSyntax
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	unit, ok := unitWords[strings.ToLower(strings.TrimSpace(s[i:]))]
	if err != nil || !ok {
		return 0, strconv.ErrSyntax
	}
	d := n * float64(unit)
	if d > float64(1<<62) {
		return 0, strconv.ErrRange
	}
	return time.Duration(d), nil
}
