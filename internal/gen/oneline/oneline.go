// Package oneline keeps text that comes from a manifest or a schema (a
// message, a file path, a JSON pointer, a $defs key) on one line of an
// error message or a generated comment: it is the generator's one escape
// helper, used by internal/gen/manifest and internal/gen/schema (their
// Error methods), internal/gen/model (its errors) and internal/gen/emit
// (the generated files' "source:" line).
//
// A control character (a newline, a tab, U+0085...) is the danger: in an
// error it splits one problem into two lines, in a generated // comment it
// ends the comment. Escape writes each as its Go escape inside running
// text; Quote quotes a whole name that is not plain printable text, so that
// a name holding the two characters \n is told from one holding a newline.
package oneline

import (
	"strconv"
	"strings"
	"unicode"
)

// Escape is s with every control character (unicode.IsControl) written as
// its Go escape, as strconv.Quote writes it (\n, \t, \x00, \u0085); every
// other rune is as is.
func Escape(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Quote is s as is when every rune of it is printable (strconv.IsPrint, a
// space included), else s quoted as a Go string literal (strconv.Quote).
func Quote(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return strconv.Quote(s)
	}
	return s
}
