package model

import (
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/names"
)

// nameRules is the names: block as naming rules.
func nameRules(n *manifest.Names) *names.Rules {
	if n == nil {
		return names.Default()
	}
	var extra []string
	for _, w := range n.Add {
		extra = append(extra, w.Value)
	}
	return names.New(n.Initialisms == nil || n.Initialisms.Value, extra)
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
// valid), else the name's Go name by the manifest's names: rules.
func (b *builder) baseName(who string, name manifest.Str, goName *manifest.Str) string {
	return b.baseNameIn(b.file.Path, who, name, goName)
}

// baseNameIn is baseName of an entity declared in the manifest file.
func (b *builder) baseNameIn(file, who string, name manifest.Str, goName *manifest.Str) string {
	if goName != nil {
		if why := names.CheckGoName(goName.Value); why != "" {
			b.errorIn(file, goName.Pos, "%s: %s", who, why)
			return ""
		}
		return goName.Value
	}
	g := b.names.GoName(name.Value)
	if g == "" {
		b.errorIn(file, name.Pos, "%s has no letter or digit to make a Go name of; set go_name", who)
	}
	return g
}
