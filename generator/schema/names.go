package schema

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GoName turns any schema name into an exported Go identifier: `orders.new`
// becomes OrdersNew, `first-name` FirstName, `order_id` OrderId is kept as
// OrderID only when written so. Every run of characters that cannot appear
// in an identifier separates words; each word gets an upper-case first
// letter and keeps the rest. A name that cannot start an exported
// identifier (a digit, a letter without case such as 名, or nothing at all)
// gets an X in front: `9lives` → X9lives, `名前` → X名前. Go keywords are all
// lower case, so an exported name never is one.
func GoName(s string) string {
	var b strings.Builder
	upper := true
	for _, r := range s {
		if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	out := b.String()
	first, _ := utf8.DecodeRuneInString(out)
	if out == "" || !unicode.IsUpper(first) {
		out = "X" + out
	}
	return out
}

// EnumName is the part of an enum constant's name that comes from its
// symbol: like GoName, but a word written all in capitals is title-cased,
// so that SPADES gives Spades and IN_PROGRESS InProgress (the constant
// is then SuitSpades).
func EnumName(s string) string {
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		if strings.ToUpper(w) == w && strings.ToLower(w) != w {
			rs := []rune(strings.ToLower(w))
			rs[0] = unicode.ToUpper(rs[0])
			words[i] = string(rs)
		}
	}
	out := GoName(strings.Join(words, " "))
	if out == "X" && s != "" {
		return GoName(s)
	}
	return out
}

// namer hands out unique identifiers in one scope, in the manner of
// protogen: the first to ask for a name gets it, later ones get a
// numbered variant.
type namer struct {
	used map[string]bool
}

func newNamer(reserved ...string) *namer {
	n := &namer{used: map[string]bool{}}
	for _, r := range reserved {
		n.used[r] = true
	}
	return n
}

// take reserves the first free name among candidates, then candidates[0]
// with 2, 3... appended.
func (n *namer) take(candidates ...string) string {
	for _, c := range candidates {
		if c != "" && !n.used[c] {
			n.used[c] = true
			return c
		}
	}
	base := candidates[0]
	for i := 2; ; i++ {
		c := base + strconv.Itoa(i)
		if !n.used[c] {
			n.used[c] = true
			return c
		}
	}
}

// has reports whether name is taken.
func (n *namer) has(name string) bool { return n.used[name] }

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
