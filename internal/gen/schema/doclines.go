package schema

import (
	"strings"
	"unicode"
)

// DocLines makes schema text safe for a Go doc comment: one element per
// line, invalid UTF-8 and control characters removed, `*/` broken up, and
// no line that a Go tool could read as a directive (`go:`, `//go:`,
// `line `, or a nested comment start): such lines get a leading space,
// which keeps them text.
func DocLines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	raw := strings.Split(text, "\n")
	lines := make([]string, 0, len(raw))
	for _, l := range raw {
		lines = append(lines, docLine(l))
	}
	// Drop leading and trailing blank lines.
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func docLine(l string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(l, "") {
		switch {
		case r == '\t':
			b.WriteRune(' ')
		case unicode.IsControl(r), r == '\uFEFF', r == '\u2028', r == '\u2029':
		default:
			b.WriteRune(r)
		}
	}
	l = strings.TrimRight(b.String(), " ")
	l = strings.ReplaceAll(l, "*/", "* /")
	l = strings.ReplaceAll(l, "/*", "/ *")
	t := strings.TrimLeft(l, " ")
	if strings.HasPrefix(t, "go:") || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "line ") {
		l = " " + l
	}
	return l
}
