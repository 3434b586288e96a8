// Package edit measures how far apart two names are, for "did you mean"
// hints on misspelled keys and functions.
package edit

import "strings"

// Distance is Levenshtein's distance with transpositions of adjacent
// letters counting as one edit (cuont is one edit from count), in bytes,
// capped: names over 40 bytes are not compared and are 99 apart.
func Distance(a, b string) int {
	if len(a) > 40 || len(b) > 40 {
		return 99
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Closest returns the candidate nearest to name when it is near enough to
// be what name misspells, for a "did you mean" hint. Names are compared
// without regard to case, so "Critical" finds "critical". A candidate is
// near enough within a third of name's length in edits (at least one: so
// "cuont" finds "count", while "inc" does not find "and"), and when not
// all of it would have to change ("x" does not find "y"). Of equally near
// candidates, the first wins: pass them in a stable order.
func Closest(name string, candidates []string) (string, bool) {
	lname := strings.ToLower(name)
	best, bestDist := "", max(1, len(name)/3)+1
	for _, c := range candidates {
		if d := Distance(lname, strings.ToLower(c)); d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	return best, best != ""
}
