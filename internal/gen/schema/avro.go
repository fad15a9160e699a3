package schema

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/hamba/avro/v2"
)

// avroNamed is an Avro named type already mapped, shared across inputs
// when its canonical form and its Go name are the same (see lookup). The canonical form is rendered only
// when another input has a type of the same full name: rendering it for
// every named type re-renders every nested subtree, quadratic in the depth.
type avroNamed struct {
	schema avro.NamedSchema
	canon  string // schema.String(), once needed
	ref    *TypeRef
}

// sameAs reports whether s has the canonical form of the type mapped.
func (n *avroNamed) sameAs(s avro.NamedSchema) bool {
	if n.schema == s {
		return true
	}
	if n.canon == "" {
		n.canon = n.schema.String()
	}
	return n.canon == s.String()
}

// avroLoader maps one Avro input. It walks the schema as hamba/avro parsed
// it, so that the Go types are exactly what hamba's codec accepts.
type avroLoader struct {
	b     *builder
	in    Input
	local map[string]*TypeRef // full name → type, in this input
	busy  map[*Type]bool      // records whose fields are being mapped
	src   *AvroSource         // this input's text, once a union needs it
	// names are the Go names of the file's named types, by full name,
	// decided by the file alone (see avroFileNames).
	names map[string]string
}

func (b *builder) loadAvro(in Input) {
	raw, err := parseJSON(in.Data)
	if err != nil {
		b.failJSON(in.Path, in.Data, err)
		return
	}
	if _, ok := b.sources[in.Path]; !ok {
		b.sources[in.Path] = source{root: raw, data: in.Data}
	}
	s, err := avro.ParseWithCache(string(in.Data), "", &avro.SchemaCache{})
	if err != nil {
		for _, p := range avroExplain(raw, err) {
			b.fail(in.Path, p.ptr, p.construct, p.msg)
		}
		return
	}
	if probs := avroLogicalTypos(raw); len(probs) > 0 {
		for _, p := range probs {
			b.fail(in.Path, p.ptr, p.construct, p.msg)
		}
		return
	}
	l := &avroLoader{b: b, in: in, local: map[string]*TypeRef{}, busy: map[*Type]bool{}, names: avroFileNames(s, b.names, in.GoName)}
	l.root(s)
}

// root maps the top-level schema to the type named in.GoName.
func (l *avroLoader) root(s avro.Schema) {
	in := l.in
	switch s := s.(type) {
	case *avro.RecordSchema:
		l.record(s, "#", l.b.rootType(in, Struct, "record "+s.FullName()))
		return
	case *avro.EnumSchema:
		l.enum(s, "#", l.b.rootType(in, Enum, "enum "+s.FullName()))
		return
	case *avro.FixedSchema:
		if s.Logical() == nil {
			t := l.b.rootType(in, Alias, "fixed "+s.FullName())
			t.Doc = []string{fmt.Sprintf("%s is the Avro fixed %s (%d bytes).", t.Name, s.FullName(), s.Size())}
			t.Target = array(s.Size(), builtin("byte"))
			l.local[s.FullName()] = named(t)
			return
		}
	case *avro.UnionSchema:
		if len(nonNull(s.Types())) > 1 {
			u := l.union(s, "#", in.GoName+"Union")
			if u == nil {
				return
			}
			t := l.b.rootType(in, Alias, "union")
			t.Target, t.GoAlias = u, true
			t.Doc = []string{fmt.Sprintf("%s is an Avro union: a nil value is null, else exactly one branch of %s is set.", t.Name, u.Elem.Named.Name)}
			return
		}
	}
	t := l.b.rootType(in, Alias, string(s.Type()))
	t.Target = l.typeOf(s, "#", in.GoName+"Value")
	if t.Target == nil {
		return
	}
	t.GoAlias = needsGoAlias(t.Target)
}

// needsGoAlias says a root over r must be a Go alias: the target has
// methods (or is a pointer) that a defined type would lose.
func needsGoAlias(r *TypeRef) bool {
	switch r.Kind {
	case Builtin, Slice, Map, Array:
		return false
	}
	return true
}

func nonNull(ss avro.Schemas) []avro.Schema {
	var out []avro.Schema
	for _, s := range ss {
		if s.Type() != avro.Null {
			out = append(out, s)
		}
	}
	return out
}

// typeOf maps a schema in place (a field type, an item, a branch). hint
// names an anonymous union type, should one be needed.
func (l *avroLoader) typeOf(s avro.Schema, ptr, hint string) *TypeRef {
	switch s := s.(type) {
	case *avro.RefSchema:
		return l.typeOf(s.Schema(), ptr, hint)
	case *avro.RecordSchema:
		return l.record(s, ptr, nil)
	case *avro.EnumSchema:
		return l.enum(s, ptr, nil)
	case *avro.FixedSchema:
		return l.fixed(s, ptr)
	case *avro.ArraySchema:
		e := l.typeOf(s.Items(), ptr+"/items", hint+"Item")
		if e == nil {
			return nil
		}
		return slice(e)
	case *avro.MapSchema:
		e := l.typeOf(s.Values(), ptr+"/values", hint+"Value")
		if e == nil {
			return nil
		}
		return mapOf(e)
	case *avro.UnionSchema:
		return l.unionRef(s, ptr, hint)
	case *avro.NullSchema:
		return pointer(builtin("struct{}"))
	case *avro.PrimitiveSchema:
		return avroPrimitive(s)
	}
	l.b.fail(l.in.Path, ptr, string(s.Type()), fmt.Sprintf("Avro type %q cannot map to Go", s.Type()))
	return nil
}

func avroPrimitive(s *avro.PrimitiveSchema) *TypeRef {
	var lt avro.LogicalType
	if s.Logical() != nil {
		lt = s.Logical().Type()
	}
	switch s.Type() {
	case avro.String:
		return builtin("string") // uuid too: hamba carries it as a string
	case avro.Bytes:
		if lt == avro.Decimal {
			return bigRat()
		}
		return bytesRef()
	case avro.Int:
		switch lt {
		case avro.Date:
			return timeTime()
		case avro.TimeMillis:
			return timeDur()
		}
		return builtin("int32")
	case avro.Long:
		switch lt {
		case avro.TimestampMillis, avro.TimestampMicros, avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			return timeTime()
		case avro.TimeMicros:
			return timeDur()
		}
		return builtin("int64")
	case avro.Float:
		return builtin("float32")
	case avro.Double:
		return builtin("float64")
	case avro.Boolean:
		return builtin("bool")
	}
	return builtin("string")
}

// lookup returns the type already mapped for the named schema s at ptr:
// in this input, or, in an earlier input, a definition of the same full
// name and canonical form that gets the same Go name here, which only a
// type_go_names entry can give it (by default a nested type's name starts
// with its message's, see avroFileNames): such definitions are one type.
func (l *avroLoader) lookup(s avro.NamedSchema, ptr string) *TypeRef {
	if r, ok := l.local[s.FullName()]; ok {
		return r
	}
	for _, k := range []string{TypeKey(l.in.Path + ptr), s.FullName()} {
		gn, ok := l.b.typeNames[k]
		if !ok {
			continue
		}
		n, ok := l.b.avroNamed[avroNamedKey(s, gn)]
		if !ok || !n.sameAs(s) {
			return nil
		}
		l.b.usedTypeNames[k] = true
		l.local[s.FullName()] = n.ref
		return n.ref
	}
	return nil
}

// avroNamedKey is the key of b.avroNamed: a full name and a Go name.
func avroNamedKey(s avro.NamedSchema, goName string) string {
	return s.FullName() + " " + goName
}

func (l *avroLoader) remember(s avro.NamedSchema, r *TypeRef) {
	l.local[s.FullName()] = r
	if r.Named == nil {
		return
	}
	if k := avroNamedKey(s, r.Named.Name); l.b.avroNamed[k] == nil {
		l.b.avroNamed[k] = &avroNamed{schema: s, ref: r}
	}
}

// newNamed declares the type of the named Avro schema s at ptr under the
// name its file gives it (avroFileNames), or its type_go_names entry: by
// "<path>#<ptr>" first (which tells apart two definitions of one full
// name), then by full name.
func (l *avroLoader) newNamed(kind Kind, s avro.NamedSchema, ptr string) *Type {
	what := string(s.Type())
	if r, ok := s.(*avro.RecordSchema); ok && r.IsError() {
		what = "error"
	}
	origin := what + " " + s.FullName()
	name := l.names[s.FullName()]
	if name == "" {
		name = l.in.GoName + l.b.names.Ident(s.Name())
	}
	file := strings.TrimSuffix(path.Clean(l.in.Path), path.Ext(l.in.Path))
	return l.b.newTypeAt(kind, origin, TypeKey(l.in.Path+ptr), l.b.names.Ident(path.Base(file)+" "+s.Name()), name)
}

// avroFileNames are the Go names of the named types of one Avro file
// other than its root, by full name: the Go name of the file's message
// (prefix) and the type's short name, or its full name for a type whose
// short name a type met earlier in the file (depth first, in the order
// written) has, so that in message Order com.a.Address then com.b.Address
// give OrderAddress and OrderComBAddress. The file and its message alone
// decide them: no other message can rename its types, and the enum Kind
// or the record Line of two messages are two types, OrderKind and
// RefundKind, never a clash (see docs/schema-mapping.md#names).
func avroFileNames(root avro.Schema, r *names.Rules, prefix string) map[string]string {
	out := map[string]string{}
	short := map[string]string{} // Go name → full name
	var walk func(s avro.Schema, isRoot bool)
	walk = func(s avro.Schema, isRoot bool) {
		if n, ok := s.(avro.NamedSchema); ok && !isRoot {
			if _, seen := out[n.FullName()]; seen {
				return
			}
			name := prefix + r.Ident(n.Name())
			if other, ok := short[name]; ok && other != n.FullName() {
				name = prefix + r.Ident(n.FullName())
			}
			short[name] = n.FullName()
			out[n.FullName()] = name
		}
		switch s := s.(type) {
		case *avro.RecordSchema:
			for _, f := range s.Fields() {
				walk(f.Type(), false)
			}
		case *avro.ArraySchema:
			walk(s.Items(), false)
		case *avro.MapSchema:
			walk(s.Values(), false)
		case *avro.UnionSchema:
			for _, t := range s.Types() {
				walk(t, false)
			}
		}
	}
	walk(root, true)
	return out
}

func (l *avroLoader) record(s *avro.RecordSchema, ptr string, t *Type) *TypeRef {
	if t == nil {
		if r := l.lookup(s, ptr); r != nil {
			return r
		}
		t = l.newNamed(Struct, s, ptr)
	}
	ref := named(t)
	l.remember(s, ref)
	t.Doc = DocLines(s.Doc())
	if len(t.Doc) == 0 {
		kind := "record"
		if s.IsError() {
			kind = "error"
		}
		t.Doc = []string{fmt.Sprintf("%s is the Avro %s %s.", t.Name, kind, s.FullName())}
	}
	l.busy[t] = true
	defer delete(l.busy, t)
	fields := names.NewScope()
	siblings := map[string]string{}
	for i, f := range s.Fields() {
		siblings[f.Name()] = fmt.Sprintf("%s/fields/%d", ptr, i)
	}
	for i, f := range s.Fields() {
		fptr := fmt.Sprintf("%s/fields/%d/type", ptr, i)
		gn := l.b.fieldName(l.in, fields, siblings[f.Name()], f.Name(), siblings)
		ft := l.typeOf(f.Type(), fptr, t.Name+gn)
		if ft == nil {
			continue
		}
		if ft.Kind == Named && ft.Named.Kind == Struct && l.busy[ft.Named] {
			ft = pointer(ft) // a record that holds itself: only by reference
		}
		fd := &Field{
			GoName:   gn,
			WireName: f.Name(),
			Type:     ft,
			Doc:      DocLines(f.Doc()),
			Tags:     Tags{Avro: true, JSON: true},
		}
		if f.HasDefault() {
			fd.Default = avroDefault(f.Default())
			fd.Doc = append(fd.Doc, docLine("Default: "+fd.Default+"."))
		}
		t.Fields = append(t.Fields, fd)
	}
	return ref
}

// avroDefault renders a field default (as hamba decoded it) as JSON text.
func avroDefault(v any) string {
	if b, ok := v.([]byte); ok {
		// Avro's JSON form of bytes: one code point per byte.
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		v = string(r)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(out)
}

func (l *avroLoader) enum(s *avro.EnumSchema, ptr string, t *Type) *TypeRef {
	if t == nil {
		if r := l.lookup(s, ptr); r != nil {
			return r
		}
		t = l.newNamed(Enum, s, ptr)
	}
	ref := named(t)
	l.remember(s, ref)
	t.Doc = DocLines(s.Doc())
	if len(t.Doc) == 0 {
		t.Doc = []string{fmt.Sprintf("%s is the Avro enum %s.", t.Name, s.FullName())}
	}
	if s.HasDefault() {
		t.Doc = append(t.Doc, docLine(fmt.Sprintf("A reader meeting an unknown symbol reads %s.", s.Default())))
	}
	for _, sym := range s.Symbols() {
		t.Values = append(t.Values, &Symbol{GoName: l.b.constName(t, sym, t.Name+l.b.names.EnumSymbol(sym)), Value: sym})
	}
	return ref
}

func (l *avroLoader) fixed(s *avro.FixedSchema, ptr string) *TypeRef {
	if s.Logical() != nil {
		switch s.Logical().Type() {
		case avro.Decimal:
			return bigRat()
		case avro.Duration:
			return qual(avroPackage, "LogicalDuration")
		}
	}
	if r := l.lookup(s, ptr); r != nil {
		return r
	}
	t := l.newNamed(Alias, s, ptr)
	t.Doc = []string{fmt.Sprintf("%s is the Avro fixed %s (%d bytes).", t.Name, s.FullName(), s.Size())}
	t.Target = array(s.Size(), builtin("byte"))
	ref := named(t)
	l.remember(s, ref)
	return ref
}

// avroTypeName is the name hamba/avro gives a union branch: a named
// type's full name, a primitive's type (with ".logical"), array or map.
func avroTypeName(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	name := string(s.Type())
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		name += "." + string(ls.Logical().Type())
	}
	return name
}

// avroBranchNames gives a union branch its Go field name (a named type's
// short name, Array, Map, the logical type, or the primitive) and its key
// in Avro's JSON encoding of unions (full name, or type name).
func (l *avroLoader) avroBranchNames(s avro.Schema) (goName, jsonKey string) {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return l.b.names.Ident(n.Name()), n.FullName()
	}
	key := string(s.Type())
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		return l.b.names.Ident(string(ls.Logical().Type())), key
	}
	return l.b.names.Ident(key), key
}
