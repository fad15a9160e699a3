package names

import (
	"fmt"
	"go/token"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GoInitialisms is staticcheck's default initialism list (ST1003), golint's
// with the additions staticcheck made.
var GoInitialisms = []string{
	"ACL", "AMQP", "API", "ASCII", "CPU", "CSS", "DB", "DNS", "EOF", "GID", "GUID",
	"HTML", "HTTP", "HTTPS", "ID", "IP", "JSON", "QPS", "RAM", "RPC", "RTP", "SIP",
	"SLA", "SMTP", "SQL", "SSH", "TCP", "TLS", "TS", "TTL", "UDP", "UI", "UID",
	"URI", "URL", "UTF8", "UUID", "VM", "XML", "XMPP", "XSRF", "XSS",
}

// Rules is how names are made: which words are initialisms. The zero
// value and nil know no initialism; Default knows GoInitialisms.
type Rules struct {
	initialisms map[string]bool // upper case
}

// Default is the rules a manifest without names: gets.
func Default() *Rules { return New(true, nil) }

// New is the rules with Go's initialisms when useGo, plus extra (in any
// case).
func New(useGo bool, extra []string) *Rules {
	r := &Rules{initialisms: map[string]bool{}}
	if useGo {
		for _, w := range GoInitialisms {
			r.initialisms[w] = true
		}
	}
	for _, w := range extra {
		r.initialisms[strings.ToUpper(w)] = true
	}
	return r
}

// IsInitialism reports whether word (in any case) is written in capitals.
func (r *Rules) IsInitialism(word string) bool {
	return r != nil && r.initialisms[strings.ToUpper(word)]
}

// GoName is the exported Go identifier made of name's words (see the
// package doc): orders.new → OrdersNew, order_id → OrderID, first-name →
// FirstName. A result that does not start with an upper-case letter (a
// digit, a letter without case such as 名) gets an X in front: 9lives →
// X9lives, 名前 → X名前. Invalid UTF-8 separates words like punctuation.
// It returns "" when name holds no letter or digit: the caller says what
// to do (the model reports it, the schema stage falls back to X).
func (r *Rules) GoName(name string) string {
	var b strings.Builder
	for _, w := range Words(name) {
		b.WriteString(r.word(w))
	}
	return exported(b.String())
}

// Ident is GoName, or X when name holds no letter or digit.
func (r *Rules) Ident(name string) string {
	if g := r.GoName(name); g != "" {
		return g
	}
	return "X"
}

// EnumSymbol is the part of an enum constant's name that comes from its
// symbol: like Ident, but a word written all in capitals is title-cased
// unless it is an initialism or the whole symbol is one word of at most
// three letters (a code such as EUR), so that SPADES gives Spades,
// IN_PROGRESS InProgress, SMS_2 Sms2, while EUR and HTTP2 stay (the
// constants are SuitSpades, CurrencyEUR).
func (r *Rules) EnumSymbol(sym string) string {
	var b strings.Builder
	words := Words(sym)
	for _, w := range words {
		if isUpperWord(w) && !r.keepCaps(w, len(words) == 1) {
			rs := []rune(strings.ToLower(w))
			rs[0] = unicode.ToUpper(rs[0])
			w = string(rs)
		}
		b.WriteString(r.word(w))
	}
	if s := exported(b.String()); s != "" {
		return s
	}
	return "X"
}

// keepCaps reports whether an all-capitals enum word stays so.
func (r *Rules) keepCaps(w string, alone bool) bool {
	letters := strings.TrimRightFunc(w, unicode.IsDigit)
	return (alone && utf8.RuneCountInString(letters) <= 3) || r.IsInitialism(letters) || r.IsInitialism(w)
}

func isUpperWord(w string) bool {
	return strings.ToUpper(w) == w && strings.ToLower(w) != w
}

// word is w with an upper-case first rune, or all in capitals when it is
// an initialism, or an initialism's plural (ids → IDs, urls → URLs).
func (r *Rules) word(w string) string {
	if r.IsInitialism(w) {
		return strings.ToUpper(w)
	}
	if stem, ok := strings.CutSuffix(w, "s"); ok && len(stem) > 1 && r.IsInitialism(stem) {
		return strings.ToUpper(stem) + "s"
	}
	first, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(first)) + w[n:]
}

func exported(s string) string {
	if s == "" {
		return ""
	}
	if first, _ := utf8.DecodeRuneInString(s); !unicode.IsUpper(first) {
		return "X" + s
	}
	return s
}

// Words splits name at every rune that is neither a letter nor a digit
// (invalid UTF-8 included) and where the case changes: before an
// upper-case letter that follows a lower-case letter or a digit, and
// before the last of a run of capitals followed by a lower-case letter
// (HTMLParser → HTML Parser).
func Words(name string) []string {
	var words []string
	for _, part := range strings.FieldsFunc(strings.ToValidUTF8(name, " "), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		rs := []rune(part)
		start := 0
		for i := 1; i < len(rs); i++ {
			prev, cur := rs[i-1], rs[i]
			split := unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev))
			if !split && unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) {
				split = true
			}
			if split {
				words = append(words, string(rs[start:i]))
				start = i
			}
		}
		words = append(words, string(rs[start:]))
	}
	return words
}

// LowerFirst is name, exported, made unexported: its first word in lower
// case (OrderPlaced → orderPlaced, HTTPOrder → httpOrder, ID → id).
func LowerFirst(name string) string {
	rs := []rune(name)
	n := 0
	for n < len(rs) && unicode.IsUpper(rs[n]) {
		n++
	}
	switch {
	case n == 0:
		return name
	case n > 1 && n < len(rs) && unicode.IsLower(rs[n]):
		n-- // the last capital starts the next word
	}
	for i := 0; i < n; i++ {
		rs[i] = unicode.ToLower(rs[i])
	}
	return string(rs)
}

// CheckGoName reports why s cannot be a go_name, or "" when it can.
func CheckGoName(s string) string {
	switch {
	case !token.IsIdentifier(s):
		return fmt.Sprintf("go_name %q is not a Go identifier", s)
	case !token.IsExported(s):
		return fmt.Sprintf("go_name %q is not exported: start it with an upper-case letter", s)
	}
	return ""
}

// Scope hands out unique identifiers in one scope, in the manner of
// protogen: a name is taken once; Take numbers a name only when every
// candidate is taken.
type Scope struct {
	used map[string]bool
}

// NewScope is a scope in which reserved are already taken.
func NewScope(reserved ...string) *Scope {
	s := &Scope{used: map[string]bool{}}
	for _, r := range reserved {
		s.used[r] = true
	}
	return s
}

// Take reserves the first free name among candidates, then candidates[0]
// with 2, 3... appended.
func (s *Scope) Take(candidates ...string) string {
	for _, c := range candidates {
		if c != "" && !s.used[c] {
			s.used[c] = true
			return c
		}
	}
	base := candidates[0]
	for i := 2; ; i++ {
		c := base + strconv.Itoa(i)
		if !s.used[c] {
			s.used[c] = true
			return c
		}
	}
}

// Has reports whether name is taken.
func (s *Scope) Has(name string) bool { return s.used[name] }
