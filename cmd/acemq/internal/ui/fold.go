package ui

import (
	"regexp"
	"strings"
	"unicode"
)

// quoted matches a quoted value: "..." anywhere, '...' or `...` after a
// space, punctuation or the start (so an apostrophe in "can't" opens
// none), and typographic quotes.
var quoted = regexp.MustCompile("\"[^\"]*\"|(?:^|[\\s(\\[{=:,])'[^'\\n]*'|`[^`]*`|“[^”]*”|‘[^’]*’")

// Fold is the group a reason belongs to: quoted values become "…", and
// every word with a digit in it (ids, numbers, times: A-17, 42, 3.5s,
// 2026-11-30T10:00:00Z, a UUID) becomes "#", so that "gave up after 5
// attempts: order A-17 not found" and "gave up after 4 attempts: order B-3
// not found" are one group, "gave up after # attempts: order # not found".
// Punctuation that ends a word (a colon, a full stop) is kept.
func Fold(reason string) string {
	s := quoted.ReplaceAllStringFunc(reason, func(m string) string {
		// Keep what the pattern took before the opening quote.
		if i := strings.IndexAny(m, "'"); i > 0 && !strings.HasPrefix(m, "\"") && !strings.HasPrefix(m, "`") {
			return m[:i] + "\"…\""
		}
		return "\"…\""
	})
	var b strings.Builder
	b.Grow(len(s))
	for i, w := range strings.Fields(s) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(foldWord(w))
	}
	return b.String()
}

// foldWord is w, or "#" (with w's leading and trailing punctuation) when
// it holds a digit.
func foldWord(w string) string {
	if !strings.ContainsFunc(w, unicode.IsDigit) {
		return w
	}
	start := strings.IndexFunc(w, func(r rune) bool { return !strings.ContainsRune("([{<", r) })
	end := strings.LastIndexFunc(w, func(r rune) bool { return !strings.ContainsRune(".,:;)]}>!?", r) })
	if start < 0 || end < start {
		return "#"
	}
	return w[:start] + "#" + w[end+1:]
}
