package schema

import (
	"cmp"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/oneline"
)

// A type's Go name is decided from where the type is defined alone, never
// from the other messages (see docs/generator.md#names): a message's root
// type is the message's Go name; a named Avro type is its message's Go
// name and its short name (its full name when an earlier type of its file
// has that short name, see avroFileNames), each message's file having
// types of its own unless a type_go_names entry gives identical
// definitions one name (lookup); a JSON Schema type is its document's qualifier (the
// owning message's Go name, or the file's name) plus its key or property,
// and a $ref from another file to a message's schema whose Go name is not
// the file's name is refused (refType); a type_go_names entry
// (WithTypeNames) overrides any of these. When two different declarations
// would get the same Go name, that is a *NameClash, not a number nor a
// qualification of one of them: a number or a longer name handed to
// whichever comes second would rename an existing type when a message that
// sorts first is added.

// Claim is a declaration that takes a package-level Go name.
type Claim struct {
	// Key is the type_go_names key that renames it: "<path>#<pointer>"
	// of a JSON Schema type, the full name of a named Avro type; for an
	// enum constant, its enum's key. "" when there is none (a message's
	// own type, a reserved name, an Avro union).
	Key string
	// What says what it is: `message "Refund"`, "the schema at
	// #/$defs/address in common/address.json", "the Avro enum
	// com.acme.Method", `the constant for "bot" of ...`.
	What string
	// Message is the Input.Message whose schema declared it (for a type
	// several messages share, the first to be mapped); "" for a reserved
	// name.
	Message string

	// Root is set for a message's own type.
	Root bool
	// Renamed is the type_go_names key that gave the name, if one did.
	Renamed string

	alt     string // a named Avro type: "<path>#<pointer>" of its definition
	altName string // and a name for it: the file's name and the short name
	owner   string // an enum constant: its enum's origin
}

// NameClash is two different declarations that would get the same Go
// name. A comes before B in a fixed order (reserved names, then message
// types, then by Key and What), so that the error does not depend on the
// order of the messages; B is the one to rename.
type NameClash struct {
	Name string
	A, B Claim
	// Suggest is a type_go_names entry that would rename B, like
	// `"other/address.json#": OtherAddress`; "" when B has no key.
	Suggest string
}

// Error names both declarations and the Go name.
func (e *NameClash) Error() string {
	return fmt.Sprintf("%s becomes the Go name %s, which %s has too", e.B.What, e.Name, e.A.What)
}

// WithTypeNames gives types the Go names of a manifest's type_go_names,
// by Claim.Key (a key's path is cleaned); the keys that name no type are
// in Universe.UnusedTypeNames.
func WithTypeNames(byKey map[string]string) Option {
	return func(b *builder) {
		for k, v := range byKey {
			b.typeNames[TypeKey(k)] = v
		}
	}
}

// TypeKey is key as the builder compares it: for "<path>#<pointer>", the
// path cleaned (./schemas/../common/a.json#/$defs/x: common/a.json#/$defs/x).
func TypeKey(key string) string {
	p, ptr, ok := strings.Cut(key, "#")
	if !ok {
		return key
	}
	return path.Clean(p) + "#" + ptr
}

// reserve takes name for a declaration of the generated package that is
// no type (Build's reserved).
func (b *builder) reserve(name string) {
	b.taken[name] = &Claim{What: "a declaration of the generated package"}
}

// claimRoot takes in.GoName for in's own type; false when it is taken.
func (b *builder) claimRoot(in Input) bool {
	if _, ok := b.taken[in.GoName]; ok {
		return false
	}
	b.taken[in.GoName] = &Claim{What: fmt.Sprintf("message %q", in.Message), Message: in.Message, Root: true}
	return true
}

// typeName is the Go name of the type at origin: its type_go_names entry
// (by alt, then by the origin's key), else name. A name another
// declaration has is a NameClash; the name is returned anyway (the
// generation fails).
func (b *builder) typeName(origin, alt, altName, name string) string {
	key, renamed := originKey(origin), ""
	for _, k := range []string{alt, key} {
		if gn, ok := b.typeNames[k]; ok && k != "" {
			b.usedTypeNames[k] = true
			name, renamed = gn, k
			break
		}
	}
	b.claim(name, &Claim{Key: key, What: originWhat(origin), Message: b.cur.Message, Renamed: renamed, alt: alt, altName: altName})
	return name
}

// constName is the Go name of enum t's constant for sym: name, numbered
// when an earlier constant of the same enum has it (two symbols that make
// the same words, a-b and a_b); a name any other declaration has is a
// NameClash.
func (b *builder) constName(t *Type, sym, name string) string {
	c := &Claim{Key: originKey(t.Origin), What: fmt.Sprintf("the constant for %q of %s", sym, originWhat(t.Origin)), Message: b.cur.Message, owner: t.Origin}
	base := name
	for i := 2; ; i++ {
		prev, ok := b.taken[name]
		if !ok || prev.owner != t.Origin {
			break
		}
		name = base + strconv.Itoa(i)
	}
	b.claim(name, c)
	return name
}

func (b *builder) claim(name string, c *Claim) {
	prev, ok := b.taken[name]
	if !ok {
		b.taken[name] = c
		return
	}
	if prev.Key != "" && prev.Key == c.Key && prev.owner == c.owner {
		ptr := "#"
		if _, p, ok := strings.Cut(c.alt, "#"); ok {
			ptr = "#" + p
		}
		b.fail(b.cur.Path, ptr, "name", fmt.Sprintf("%s is defined twice, differently (in the schemas of messages %q and %q); define it once the same way, or give this one its own Go name in type_go_names: %q: %s",
			c.What, prev.Message, c.Message, c.alt, c.altName))
		return
	}
	a, z := *prev, *c
	if claimLess(z, a) {
		a, z = z, a
	}
	b.clashes = append(b.clashes, &NameClash{Name: name, A: a, B: z})
}

// clashErrors are the name clashes, each with a suggestion that takes no
// name of the package (known only once every type is named).
func (b *builder) clashErrors() []error {
	var out []error
	for _, e := range b.clashes {
		if e.B.Key != "" {
			e.Suggest = fmt.Sprintf("%s: %s", strconv.Quote(e.B.Key), b.suggestName(e.B.Key, e.Name))
		}
		out = append(out, e)
	}
	return out
}

// claimLess orders the two sides of a clash: a reserved name first, then
// a message's type, then by key and description.
func claimLess(x, y Claim) bool {
	rank := func(c Claim) int {
		switch {
		case c.Message == "":
			return 0
		case c.Root:
			return 1
		case c.Renamed == "":
			return 2
		}
		return 3 // named by type_go_names: the entry is what to change
	}
	if r := cmp.Compare(rank(x), rank(y)); r != 0 {
		return r < 0
	}
	return cmp.Or(cmp.Compare(x.Key, y.Key), cmp.Compare(x.What, y.What)) < 0
}

// suggestName is a Go name for the type of key, other than name and free:
// made of its file's path and its pointer's last token, or all of its
// tokens (other/address.json# OtherAddress, com.zoo.Method ComZooMethod,
// schemas/refund.json#/properties/type SchemasRefundType or
// SchemasRefundPropertiesType).
func (b *builder) suggestName(key, name string) string {
	p, ptr, ok := strings.Cut(key, "#")
	if !ok {
		p, ptr = key, ""
	}
	s := strings.TrimSuffix(p, path.Ext(p))
	if !ok {
		s = key
	}
	tokens := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	last := s + " " + unescape.Replace(tokens[len(tokens)-1])
	all := s + " " + unescape.Replace(strings.Join(tokens, " "))
	for _, c := range []string{last, all, all + " type"} {
		if g := b.names.Ident(c); g != name && b.taken[g] == nil {
			return g
		}
	}
	return b.names.Ident(all) + "Type"
}

// originKey is the type_go_names key of a Type.Origin: "<path>#<pointer>"
// for a JSON Schema type, the full name for a named Avro type, else "".
func originKey(origin string) string {
	if kind, full, ok := strings.Cut(origin, " "); ok && avroKinds[kind] {
		return full
	}
	if i := strings.LastIndex(origin, " #"); i >= 0 {
		return TypeKey(origin[:i] + origin[i+1:])
	}
	return ""
}

var avroKinds = map[string]bool{"record": true, "error": true, "enum": true, "fixed": true}

// originWhat says what the type at origin is.
func originWhat(origin string) string {
	if kind, full, ok := strings.Cut(origin, " "); ok && avroKinds[kind] {
		return fmt.Sprintf("the Avro %s %s", kind, full)
	}
	if i := strings.LastIndex(origin, " #"); i >= 0 {
		return fmt.Sprintf("the schema at %s in %s", oneline.Quote(origin[i+1:]), oneline.Quote(origin[:i]))
	}
	return "an Avro " + origin
}

// unusedTypeNames are the keys of WithTypeNames that renamed nothing,
// sorted.
func (b *builder) unusedTypeNames() []string {
	var out []string
	for k := range b.typeNames {
		if !b.usedTypeNames[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
