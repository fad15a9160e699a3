package model

import (
	"fmt"
	"go/token"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acemq/acemq-go/generator/manifest"
)

// GoName derives an exported Go identifier from a manifest name: it splits
// name at every rune that is neither a letter nor a digit and upper-cases
// the first rune of each part; a result that does not start with an
// upper-case letter gets an X in front. It returns "" when name holds no
// letter or digit at all.
func GoName(name string) string {
	var b strings.Builder
	upNext := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upNext = true
			continue
		}
		if upNext {
			r = unicode.ToUpper(r)
			upNext = false
		}
		b.WriteRune(r)
	}
	s := b.String()
	if s == "" {
		return ""
	}
	if r, _ := utf8.DecodeRuneInString(s); !unicode.IsUpper(r) {
		s = "X" + s
	}
	return s
}

// lowerFirst is name with its first rune in lower case, for unexported
// identifiers derived from exported ones.
func lowerFirst(name string) string {
	r, n := utf8.DecodeRuneInString(name)
	return string(unicode.ToLower(r)) + name[n:]
}

// validGoName reports why s cannot be a go_name, or "" when it can.
func validGoName(s string) string {
	switch {
	case !token.IsIdentifier(s):
		return fmt.Sprintf("go_name %q is not a Go identifier", s)
	case !token.IsExported(s):
		return fmt.Sprintf("go_name %q is not exported: start it with an upper-case letter", s)
	}
	return ""
}

// claim is who took a package-level identifier.
type claim struct {
	who string // e.g. `message "OrderPlaced"`
	pos manifest.Pos
}

// namespace is the package-level identifiers of the generated code. The
// first claim wins; a second is an error naming both.
type namespace struct {
	b     *builder
	taken map[string]claim
	order []string
}

// claim takes ident for who, or reports the clash and returns false.
func (n *namespace) claim(ident, who string, pos manifest.Pos) bool {
	if prev, ok := n.taken[ident]; ok && prev.pos.Line == 0 {
		n.b.errorf(pos, "%s becomes the Go name %s, which %s takes; set go_name", who, ident, prev.who)
		return false
	} else if ok {
		n.b.errorf(pos, "%s and %s (%s:%d:%d) both become the Go name %s; set go_name on one of them",
			who, prev.who, n.b.file.Path, prev.pos.Line, prev.pos.Col, ident)
		return false
	}
	n.taken[ident] = claim{who: who, pos: pos}
	n.order = append(n.order, ident)
	return true
}

// baseName is the Go base name of an entity: its go_name when set (and
// valid), else GoName(name).
func (b *builder) baseName(who string, name manifest.Str, goName *manifest.Str) string {
	if goName != nil {
		if why := validGoName(goName.Value); why != "" {
			b.errorf(goName.Pos, "%s: %s", who, why)
			return ""
		}
		return goName.Value
	}
	g := GoName(name.Value)
	if g == "" {
		b.errorf(name.Pos, "%s has no letter or digit to make a Go name of; set go_name", who)
	}
	return g
}
