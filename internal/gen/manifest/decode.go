package manifest

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// decodeFile builds the tree from a root the schema has accepted, in one
// walk of the YAML nodes led by the yaml tags of ast.go. It never fails: a
// value of the wrong shape (on a manifest the schema refused) reads as its
// zero value, an unknown key is skipped, and of a key written twice the
// last wins.
func decodeFile(path string, root *yaml.Node) *File {
	f := &File{Path: path}
	decodeValue(reflect.ValueOf(f).Elem(), nil, root)
	return f
}

var (
	strType   = reflect.TypeFor[Str]()
	intType   = reflect.TypeFor[Int]()
	floatType = reflect.TypeFor[Float]()
	boolType  = reflect.TypeFor[Bool]()
	posType   = reflect.TypeFor[Pos]()
	anyType   = reflect.TypeFor[any]()
)

// decodeValue sets v from the node n, written under key (nil for the root
// and for an item of a list).
func decodeValue(v reflect.Value, key, n *yaml.Node) {
	n = resolveAlias(n)
	switch v.Type() {
	case strType, intType, floatType, boolType, anyType:
		if x := leafOf(v.Type(), n); x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		decodeValue(p.Elem(), key, n)
		v.Set(p)
	case reflect.Slice:
		decodeSlice(v, n)
	case reflect.Struct:
		decodeStruct(v, key, n)
	default:
		panic(fmt.Sprintf("manifest: the decoder cannot read a %s", v.Type()))
	}
}

// leafOf is the value of a scalar field of type t read from n: a Str, Int,
// Float or Bool with n's position, or for any n's plain value (nil for
// null).
func leafOf(t reflect.Type, n *yaml.Node) any {
	at := posOf(n)
	switch t {
	case strType:
		return Str{Value: n.Value, Pos: at}
	case intType:
		v, _ := scalar(n).(int64)
		return Int{Value: int(v), Pos: at}
	case floatType:
		var v float64
		switch x := scalar(n).(type) {
		case int64:
			v = float64(x)
		case float64:
			v = x
		}
		return Float{Value: v, Pos: at}
	case boolType:
		v, _ := scalar(n).(bool)
		return Bool{Value: v, Pos: at}
	}
	return scalar(n)
}

// decodeSlice appends to v the entries of the mapping n, for a slice of
// entries (a struct with a ,key field), else the items of the list n.
func decodeSlice(v reflect.Value, n *yaml.Node) {
	elem := v.Type().Elem()
	if isEntry(elem) {
		for _, kv := range pairs(n) {
			e := reflect.New(elem).Elem()
			decodeValue(e, kv.key, kv.val)
			v.Set(reflect.Append(v, e))
		}
		return
	}
	if n.Kind != yaml.SequenceNode {
		return
	}
	for _, item := range n.Content {
		e := reflect.New(elem).Elem()
		decodeValue(e, nil, item)
		v.Set(reflect.Append(v, e))
	}
}

// decodeStruct sets the fields of v from the mapping n written under key.
func decodeStruct(v reflect.Value, key, n *yaml.Node) {
	fs := fieldsOf(v.Type())
	if fs.pos >= 0 {
		at := n
		if key != nil {
			at = key
		}
		v.Field(fs.pos).Set(reflect.ValueOf(posOf(at)))
	}
	if fs.key >= 0 && key != nil {
		v.Field(fs.key).Set(reflect.ValueOf(Str{Value: key.Value, Pos: posOf(key)}))
	}
	if fs.value >= 0 {
		decodeValue(v.Field(fs.value), key, n)
		return
	}
	for _, kv := range pairs(n) {
		if i, ok := fs.byKey[kv.key.Value]; ok {
			decodeValue(v.Field(i), kv.key, kv.val)
		}
	}
}

// fields is what the yaml tags of a struct of ast.go say: the field of each
// key, and the index of the ,pos ,key and ,value fields (-1: none).
type fields struct {
	byKey           map[string]int
	pos, key, value int
}

var fieldCache sync.Map // reflect.Type -> *fields

// fieldsOf reads the yaml tags of the struct type t. A field without a tag,
// or with one this decoder does not know, is a mistake in ast.go: it
// panics, on the first manifest read.
func fieldsOf(t reflect.Type) *fields {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*fields)
	}
	fs := &fields{byKey: map[string]int{}, pos: -1, key: -1, value: -1}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("yaml")
		switch {
		case !ok:
			panic(fmt.Sprintf("manifest: %s.%s has no yaml tag", t.Name(), f.Name))
		case tag == "-":
		case tag == ",pos" && f.Type == posType:
			fs.pos = i
		case tag == ",key" && f.Type == strType:
			fs.key = i
		case tag == ",value":
			fs.value = i
		case tag != "" && !strings.ContainsAny(tag, ",."):
			fs.byKey[tag] = i
		default:
			panic(fmt.Sprintf("manifest: %s.%s: yaml tag %q is not a key, -, ,pos, ,key (a Str) or ,value", t.Name(), f.Name, tag))
		}
	}
	if fs.value >= 0 && len(fs.byKey) > 0 {
		panic(fmt.Sprintf("manifest: %s has a ,value field and keys", t.Name()))
	}
	actual, _ := fieldCache.LoadOrStore(t, fs)
	return actual.(*fields)
}

// isEntry says whether a slice of t is read from a mapping: t (or what it
// points to) is a struct with a ,key field.
func isEntry(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != strType && t != intType && t != floatType && t != boolType &&
		fieldsOf(t).key >= 0
}

type pair struct{ key, val *yaml.Node }

// pairs are the entries of a mapping node in the order written (nothing
// for a null node).
func pairs(n *yaml.Node) []pair {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{key: resolveAlias(n.Content[i]), val: resolveAlias(n.Content[i+1])})
	}
	return out
}
