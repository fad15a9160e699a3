package manifest

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` for the candidate closest to
// name, or "" when none is close enough to be a likely typo.
func DidYouMean(name string, candidates []string) string {
	if s := Closest(name, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// Closest returns the candidate nearest to name by edit distance (case
// folded), when it is within a third of the name's length (at least 2
// edits); else the candidate sharing the longest prefix with name, when
// that prefix is at least 4 runes and two thirds of the candidate
// ("retries" → retry); else "". Ties go to the earlier candidate.
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	limit := max(2, len([]rune(name))/3)
	for _, c := range candidates {
		d := EditDistance(strings.ToLower(name), strings.ToLower(c))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	bestP := 0
	for _, c := range candidates {
		p := commonPrefix(strings.ToLower(name), strings.ToLower(c))
		if p >= 4 && 3*p >= 2*len([]rune(c)) && p > bestP {
			best, bestP = c, p
		}
	}
	return best
}

// commonPrefix is the length in runes of the prefix a and b share.
func commonPrefix(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n := 0
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n
}

// EditDistance is the Levenshtein distance between a and b, in runes: the
// measure of every did-you-mean of the generator's stages.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
