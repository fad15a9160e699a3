package schema

// Type expression constructors.

func builtin(name string) *TypeRef { return &TypeRef{Kind: Builtin, Name: name} }

func qual(pkg, name string) *TypeRef { return &TypeRef{Kind: Qual, Pkg: pkg, Name: name} }

func named(t *Type) *TypeRef { return &TypeRef{Kind: Named, Named: t} }

func pointer(e *TypeRef) *TypeRef { return &TypeRef{Kind: Pointer, Elem: e} }

func slice(e *TypeRef) *TypeRef { return &TypeRef{Kind: Slice, Elem: e} }

func mapOf(e *TypeRef) *TypeRef { return &TypeRef{Kind: Map, Elem: e} }

func array(n int, e *TypeRef) *TypeRef { return &TypeRef{Kind: Array, Len: n, Elem: e} }

var (
	timeTime    = func() *TypeRef { return qual("time", "Time") }
	timeDur     = func() *TypeRef { return qual("time", "Duration") }
	bigRat      = func() *TypeRef { return pointer(qual("math/big", "Rat")) }
	rawJSON     = func() *TypeRef { return qual("encoding/json", "RawMessage") }
	bytesRef    = func() *TypeRef { return slice(builtin("byte")) }
	avroPackage = "github.com/hamba/avro/v2"
)

// Nilable reports whether the zero value of r is nil, so that it can stand
// for "absent" or "null" without a pointer: slices, maps, pointers and
// json.RawMessage.
func (r *TypeRef) Nilable() bool {
	switch r.Kind {
	case Pointer, Slice, Map:
		return true
	case Qual:
		return r.Pkg == "encoding/json" && r.Name == "RawMessage"
	case Named:
		return r.Named.Kind == Alias && r.Named.Target != nil && r.Named.Target.Nilable()
	}
	return false
}

// String renders r as Go source, for tests and messages.
func (r *TypeRef) String() string {
	switch r.Kind {
	case Builtin:
		return r.Name
	case Qual:
		return r.Pkg + "." + r.Name
	case Named:
		return r.Named.Name
	case Pointer:
		return "*" + r.Elem.String()
	case Slice:
		return "[]" + r.Elem.String()
	case Map:
		return "map[string]" + r.Elem.String()
	case Array:
		return "[" + itoa(r.Len) + "]" + r.Elem.String()
	}
	return "?"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}
