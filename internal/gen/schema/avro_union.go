package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/hamba/avro/v2"
)

// unionRef maps a union in place: null and one type is a pointer (or the
// nil-able type itself), one type alone is that type, anything else a
// union struct.
func (l *avroLoader) unionRef(s *avro.UnionSchema, ptr, hint string) *TypeRef {
	types := s.Types()
	nn := nonNull(types)
	switch {
	case len(nn) == 0:
		return pointer(builtin("struct{}"))
	case len(nn) == 1:
		idx := 0
		for i, t := range types {
			if t.Type() != avro.Null {
				idx = i
			}
		}
		t := l.typeOf(nn[0], fmt.Sprintf("%s/%d", ptr, idx), hint)
		if t == nil || len(types) == 1 {
			return t
		}
		if t.Kind == Slice {
			return t // hamba reads null as a nil slice
		}
		return pointer(t)
	}
	return l.union(s, ptr, hint)
}

// union declares a union struct for a general union and returns *U.
//
// The struct converts itself for hamba/avro without any registration, so
// that it works with whatever avro.Config the runtime uses: ToAny hands
// hamba a one-entry map (branch name → value), and FromAny accepts either
// the typed value (for branches every resolver knows: primitives) or
// hamba's generic form of an unresolved union (branch name → generic
// value); a record, array or map branch in generic form is re-encoded
// with its own schema and decoded into the Go type.
//
// Its name is the hint (the record's name and the field's), with Union
// after it when a named type of the file has that name: in message Order,
// the field deep of ["null", "float", {"type": "record", "name": "Deep",
// ...}] holds an OrderDeepUnion, the record being OrderDeep. The file
// alone decides it, as it decides the named types' names.
func (l *avroLoader) union(s *avro.UnionSchema, ptr, hint string) *TypeRef {
	for _, n := range l.names {
		if n == hint {
			hint += "Union"
			break
		}
	}
	t := l.b.newType(Union, "union", hint)
	ref := pointer(named(t))
	fields := names.NewScope("ToAny", "FromAny")
	var branches []string
	decoded := map[string]string{} // Go type a typed branch decodes to → branch
	keys := map[string]bool{}      // JSON keys taken
	for i, br := range s.Types() {
		if br.Type() == avro.Null {
			t.Nullable = true
			continue
		}
		bptr := fmt.Sprintf("%s/%d", ptr, i)
		rn := avroTypeName(br)
		gt := l.typeOf(br, bptr, t.Name+l.b.names.Ident(rn))
		if gt == nil {
			continue
		}
		if gt.Kind == Pointer {
			l.b.fail(l.in.Path, bptr, "union branch "+rn, fmt.Sprintf("a union branch of type %s (Go %s) cannot be told apart by hamba/avro; make the union [\"null\", %s] or move the branch into its own field", rn, gt, rn))
			continue
		}
		gn, key := l.avroBranchNames(br)
		if keys[key] {
			key = rn // two branches of one Avro type (hamba allows it)
		}
		keys[key] = true
		f := &Field{
			GoName:   fields.Take(gn, l.b.names.Ident(rn)),
			WireName: key,
			Type:     pointer(gt),
			Tags:     Tags{JSON: true, OmitEmpty: true},
			Branch:   rn,
		}
		l.branchConversion(f, br, gt, avroPath(bptr))
		if f.Value != nil && f.Typed {
			if other, dup := decoded[f.Value.String()]; dup {
				l.b.fail(l.in.Path, bptr, "union branch "+rn, fmt.Sprintf("union branches %s and %s both decode to Go %s, so hamba/avro cannot tell them apart; keep one of them", other, rn, f.Value))
				continue
			}
			decoded[f.Value.String()] = rn
		}
		t.Fields = append(t.Fields, f)
		branches = append(branches, rn)
	}
	t.Doc = []string{
		fmt.Sprintf("%s is an Avro union of %s: exactly one field is set.", t.Name, strings.Join(branches, ", ")),
	}
	if t.Nullable {
		t.Doc = append(t.Doc, "A nil pointer to it is the union's null.")
	}
	return ref
}

// branchConversion says how FromAny turns what hamba decoded for a branch
// into the field's Go type gt.
func (l *avroLoader) branchConversion(f *Field, br avro.Schema, gt *TypeRef, path []int) {
	if r, ok := br.(*avro.RefSchema); ok {
		br = r.Schema()
	}
	if d, ok := hambaRegistered[f.Branch]; ok {
		f.Value, f.Typed = d, true // every resolver knows it: typed or generic, the same Go value
		return
	}
	switch br := br.(type) {
	case *avro.EnumSchema:
		f.Value = builtin("string")
	case *avro.FixedSchema:
		if br.Logical() != nil && br.Logical().Type() == avro.Duration {
			f.Value = gt
			return
		}
		f.Value = array(br.Size(), builtin("byte"))
	case *avro.PrimitiveSchema:
		f.Value = gt // a logical type hamba does not pre-register: generic is the Go type
	default: // record, array, map: re-encode with the branch's schema
		f.Source = l.source()
		f.Path = path
	}
}

// source is the schema text of this input, embedded once in the generated
// code for the union branches that need re-encoding.
func (l *avroLoader) source() *AvroSource {
	if l.src == nil {
		id := fmt.Sprintf("acemqAvroSchema%d", len(l.b.u.AvroSources))
		l.src = &AvroSource{Text: string(l.in.Data), Ident: id, TextIdent: id + "Text"}
		l.b.u.AvroSources = append(l.b.u.AvroSources, l.src)
	}
	return l.src
}

// avroPath turns a pointer built by this loader ("#/fields/3/type/items/1")
// into the steps hamba's schema graph is walked by: a field index, 0 for
// items or values, a union branch index.
func avroPath(ptr string) []int {
	toks := strings.Split(strings.TrimPrefix(ptr, "#"), "/")
	var path []int
	for i := 0; i < len(toks); i++ {
		switch tok := toks[i]; tok {
		case "", "type":
		case "fields":
			if i+1 < len(toks) {
				n, _ := strconv.Atoi(toks[i+1])
				path = append(path, n)
				i++
			}
		case "items", "values":
			path = append(path, 0)
		default:
			n, _ := strconv.Atoi(tok)
			path = append(path, n)
		}
	}
	return path
}

// hambaRegistered are the union branch names every hamba/avro resolver
// knows, with the Go type a decoded branch arrives as (typed or generic).
var hambaRegistered = map[string]*TypeRef{
	"int":                   builtin("int"),
	"long":                  builtin("int64"),
	"float":                 builtin("float32"),
	"double":                builtin("float64"),
	"string":                builtin("string"),
	"bytes":                 bytesRef(),
	"boolean":               builtin("bool"),
	"int.date":              timeTime(),
	"int.time-millis":       timeDur(),
	"long.timestamp-millis": timeTime(),
	"long.timestamp-micros": timeTime(),
	"long.time-micros":      timeDur(),
	"string.uuid":           builtin("string"),
}
