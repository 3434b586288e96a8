// Package edit measures how far apart two names are, for "did you mean"
// hints on misspelled keys and functions.
package edit

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
