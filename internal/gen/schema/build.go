package schema

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/internal/gen/oneline"
)

// Build maps every input. reserved are Go identifiers already used by the
// model (publishers, handlers, policies...) that no type may take. All
// problems are returned at once, joined with errors.Join, each an *Error.
// The Universe is returned even on error, holding what did map.
func Build(inputs []Input, reserved []string, opts ...Option) (*Universe, error) {
	b := newBuilder(reserved)
	for _, o := range opts {
		o(b)
	}
	if b.fsys == nil {
		b.fsys = input.Memory(nil)
	}
	// Roots first: each gets exactly its GoName, before any nested type
	// can take it.
	for _, in := range inputs {
		if !b.claimRoot(in) {
			b.fail(in.Path, "#", "name", fmt.Sprintf("the Go name %q of message %q is already taken by another declaration; choose another go_name", in.GoName, in.Message))
		}
	}
	// Types are named in the order of the messages' Go names, not the
	// manifest's, so that reordering messages renames nothing; then listed
	// in the manifest's order (of the message that first needs each).
	sorted := slices.Clone(inputs)
	slices.SortStableFunc(sorted, func(a, b Input) int { return cmp.Compare(a.GoName, b.GoName) })
	b.preloadJSON(sorted)
	first := map[*Type]int{}
	rank := map[string]int{}
	for i, in := range inputs {
		if _, ok := rank[in.Message]; !ok {
			rank[in.Message] = i
		}
	}
	for _, in := range sorted {
		n := len(b.u.Types)
		b.cur = in
		b.load(in)
		for _, t := range b.u.Types[n:] {
			first[t] = rank[in.Message]
		}
	}
	slices.SortStableFunc(b.u.Types, func(x, y *Type) int { return cmp.Compare(first[x], first[y]) })
	b.planJSONChecks()
	msgOf := map[*Type]string{}
	for msg, t := range b.u.Roots {
		msgOf[t] = msg
	}
	for _, t := range b.u.Types {
		t.Doc = namedDoc(t, msgOf[t])
	}
	for _, in := range inputs {
		for ptr := range in.FieldNames {
			if !b.usedFieldNames[in.Message][ptr] {
				if b.u.UnusedFieldNames == nil {
					b.u.UnusedFieldNames = map[string][]string{}
				}
				b.u.UnusedFieldNames[in.Message] = append(b.u.UnusedFieldNames[in.Message], ptr)
			}
		}
		slices.Sort(b.u.UnusedFieldNames[in.Message])
	}
	b.u.UnusedTypeNames = b.unusedTypeNames()
	b.errs = append(b.errs, b.clashErrors()...)
	return b.u, errors.Join(b.errs...)
}

// Option changes how Build maps.
type Option func(*builder)

// WithNames makes every name by r (default: names.Default, Go's
// initialisms).
func WithNames(r *names.Rules) Option {
	return func(b *builder) {
		if r != nil {
			b.names = r
		}
	}
}

// WithFS makes Build read the files that $refs name from fsys, each
// Input.Dir being a directory name in it (see internal/gen/input). Without
// it there are no files: a $ref names another input (by $id) or nothing.
// Build does no I/O either way; internal/gen/input is the stage that reads.
func WithFS(fsys fs.FS) Option {
	return func(b *builder) { b.fsys = fsys }
}

// builder holds the state shared by every input: the package-level names
// and the types built so far.
type builder struct {
	taken map[string]*Claim // package-level Go names (typenames.go)
	cur   Input             // the input being mapped
	// clashes are the names two declarations want (typenames.go).
	clashes []*NameClash
	// rootTypes are the messages' own types.
	rootTypes map[*Type]bool
	names     *names.Rules
	fsys      fs.FS // where $refs to files are read (WithFS)
	u         *Universe
	errs      []error

	avroNamed      map[string]*avroNamed      // Avro full name and Go name (avroNamedKey) → type, across inputs
	jsonDocs       map[string]*jsonDoc        // JSON Schema documents by $id and by "file:"+path
	jsonTypes      map[*jvalue]*jsonResult    // schemas mapped to named types
	jsonBusy       map[*jvalue]bool           // schemas being mapped
	jsonStructBusy map[*Type]bool             // structs whose fields are being mapped
	usedFieldNames map[string]map[string]bool // Input.Message → Input.FieldNames pointers applied
	sources        map[string]source          // schema file path → its text, to place errors
	renamed        map[string]string          // path+"\x00"+pointer of a schema → the keyword its $ref was (toRef)
	typeNames      map[string]string          // type_go_names: TypeKey → Go name (WithTypeNames)
	usedTypeNames  map[string]bool            // typeNames keys applied
	vocab          vocabulary                 // a team's own keywords and formats (WithJSONVocabulary)
}

// fieldName is the Go name of the field at ptr of in's file: its
// Input.FieldNames entry, which no other field of the struct may have
// (siblings: every field's wire name → pointer), else the name derived
// from wire (numbered if need be).
func (b *builder) fieldName(in Input, fields *names.Scope, ptr, wire string, siblings map[string]string) string {
	if gn, ok := in.FieldNames[ptr]; ok {
		if b.usedFieldNames[in.Message] == nil {
			b.usedFieldNames[in.Message] = map[string]bool{}
		}
		b.usedFieldNames[in.Message][ptr] = true
		taken := fields.Has(gn)
		for w, p := range siblings {
			if _, renamed := in.FieldNames[p]; w != wire && !renamed && b.names.Ident(w) == gn {
				taken = true
			}
		}
		if taken {
			b.fail(in.Path, ptr, "field_go_names", fmt.Sprintf("field_go_names gives the field %q the Go name %s, which another field of its struct takes; choose another", wire, gn))
		}
		fields.Take(gn)
		return gn
	}
	return fields.Take(b.names.Ident(wire))
}

func newBuilder(reserved []string) *builder {
	b := &builder{
		taken:          map[string]*Claim{},
		rootTypes:      map[*Type]bool{},
		names:          names.Default(),
		u:              &Universe{Roots: map[string]*Type{}},
		avroNamed:      map[string]*avroNamed{},
		jsonDocs:       map[string]*jsonDoc{},
		vocab:          vocabulary{keywords: map[string]bool{}, formats: map[string]bool{}},
		jsonTypes:      map[*jvalue]*jsonResult{},
		jsonBusy:       map[*jvalue]bool{},
		jsonStructBusy: map[*Type]bool{},
		usedFieldNames: map[string]map[string]bool{},
		sources:        map[string]source{},
		renamed:        map[string]string{},
		typeNames:      map[string]string{},
		usedTypeNames:  map[string]bool{},
	}
	for _, r := range reserved {
		b.reserve(r)
	}
	return b
}

func (b *builder) fail(path, pointer, construct, msg string) {
	line, col := b.position(path, pointer)
	pointer, construct, msg = b.asWritten(path, pointer, construct, msg)
	b.errs = append(b.errs, &Error{Path: path, Pointer: pointer, Construct: construct, Msg: msg, Line: line, Col: col})
}

// newType declares the type at origin under name, or its type_go_names
// entry (see typeName).
func (b *builder) newType(kind Kind, origin, name string) *Type {
	return b.newTypeAt(kind, origin, "", "", name)
}

// newTypeAt is newType with alt, another type_go_names key of the type,
// and altName, a Go name to suggest for it.
func (b *builder) newTypeAt(kind Kind, origin, alt, altName, name string) *Type {
	t := &Type{Kind: kind, Origin: origin, Name: b.typeName(origin, alt, altName, name)}
	b.u.Types = append(b.u.Types, t)
	return t
}

// rootType declares the root type of in under its settled GoName.
func (b *builder) rootType(in Input, kind Kind, origin string) *Type {
	t := &Type{Kind: kind, Origin: origin, Name: in.GoName}
	b.rootTypes[t] = true
	b.u.Types = append(b.u.Types, t)
	b.u.Roots[in.Message] = t
	return t
}

func (b *builder) load(in Input) {
	switch in.Format {
	case Avro:
		b.loadAvro(in)
	case JSONSchema:
		b.loadJSON(in)
	default:
		b.fail(in.Path, "#", "format", "unknown schema format; use a .avsc (Avro) or .json (JSON Schema) file")
	}
}

// namedDoc is t's doc comment made to begin with t's name, as Go doc
// comments do: kept when it does; a first line that is only the name (a
// JSON Schema title) is dropped; any other text follows a line saying what
// t is ("Suit is the Avro enum com.acme.Suit.").
func namedDoc(t *Type, message string) []string {
	doc := t.Doc
	if len(doc) > 0 && strings.TrimSpace(doc[0]) == t.Name {
		doc = doc[1:]
		for len(doc) > 0 && strings.TrimSpace(doc[0]) == "" {
			doc = doc[1:]
		}
	}
	if len(doc) > 0 && strings.HasPrefix(doc[0], t.Name+" ") {
		return doc
	}
	var what string
	switch o := t.Origin; {
	case message != "":
		what = fmt.Sprintf("%s is the payload of the message %q.", t.Name, message)
	case strings.HasPrefix(o, "record "), strings.HasPrefix(o, "error "), strings.HasPrefix(o, "enum "), strings.HasPrefix(o, "fixed "):
		what = fmt.Sprintf("%s is the Avro %s.", t.Name, o)
	case o == "union":
		what = fmt.Sprintf("%s is an Avro union.", t.Name)
	case strings.Contains(o, " #"):
		i := strings.LastIndex(o, " #")
		what = fmt.Sprintf("%s is the schema at %s in %s.", t.Name, oneline.Quote(o[i+1:]), oneline.Quote(o[:i]))
	default:
		what = fmt.Sprintf("%s is the schema at %s.", t.Name, oneline.Quote(o))
	}
	if len(doc) == 0 {
		return []string{what}
	}
	return append([]string{what, ""}, doc...)
}
