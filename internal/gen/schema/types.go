package schema

// Format says which schema language an input is written in.
type Format int

const (
	// Avro is an Apache Avro schema (.avsc).
	Avro Format = iota
	// JSONSchema is a JSON Schema document (.json), drafts 7 to 2020-12.
	JSONSchema
)

// String returns the format's name.
func (f Format) String() string {
	switch f {
	case Avro:
		return "avro"
	case JSONSchema:
		return "jsonschema"
	}
	return "unknown"
}

// Input is one message's schema file.
type Input struct {
	Message string // manifest message name, e.g. "OrderPlaced" (for errors)
	GoName  string // Go name of the root type, settled by the model; the root type gets exactly this name
	Path    string // schema file path as written in the manifest (for errors)
	Dir     string // directory holding the file, relative $refs resolve against it: a name in WithFS's fs.FS
	Data    []byte // file contents
	Format  Format
	// FieldNames are Go names of fields settled by the manifest, by the
	// JSON pointer of the field in this file: #/properties/order_id,
	// #/fields/0. A name taken in its struct is an error; the pointers
	// that name no field are in Universe.UnusedFieldNames.
	FieldNames map[string]string
}

// Universe is every Go type that the inputs need.
type Universe struct {
	Types []*Type          // every named Go type to emit, deterministic order (inputs order, then discovery order)
	Roots map[string]*Type // by Input.Message
	// AvroSources are the schema texts general Avro unions re-encode
	// branches with (see Union), in discovery order.
	AvroSources []*AvroSource
	// UnusedFieldNames are, by Input.Message, the pointers of
	// Input.FieldNames at which no field was mapped.
	UnusedFieldNames map[string][]string
	// UnusedTypeNames are the keys of WithTypeNames that named no type,
	// sorted.
	UnusedTypeNames []string
}

// Kind is the shape of a named type.
type Kind int

const (
	// Struct is a Go struct (Avro record, JSON Schema object).
	Struct Kind = iota
	// Enum is a string type with one constant per symbol.
	Enum
	// Alias is a type over another type expression (a top-level array,
	// map, fixed, primitive, or a raw JSON value). It is a defined type
	// (`type X []T`) unless GoAlias is set (`type X = T`).
	Alias
	// Union is a general Avro union (not just null and one type): a struct
	// with one pointer field per branch, of which exactly one is set, and
	// the methods hamba/avro's UnionConverter needs (ToAny, FromAny).
	Union
)

// Type is one named Go type.
type Type struct {
	Name   string   // Go identifier
	Kind   Kind     // Struct, Enum, Alias or Union
	Doc    []string // doc comment lines, already safe for a // comment
	Origin string   // where it came from, e.g. "record com.acme.Order" or "#/$defs/User"

	Fields []*Field  // Struct; Union: one per non-null branch
	Values []*Symbol // Enum
	Target *TypeRef  // Alias: the underlying type
	// GoAlias makes an Alias a Go type alias (`type X = T`), used when T
	// has methods that a defined type would lose (time.Time,
	// json.RawMessage, *big.Rat, a union) or is a pointer.
	GoAlias bool

	// Nullable says a Union has a null branch (a nil *T is null).
	Nullable bool

	// JSONCheck is what the generated check of a JSON Schema struct
	// verifies; nil when its schema, or one it reaches, has a keyword the
	// check cannot verify exactly (the reference validator alone decides).
	JSONCheck *JSONStructCheck

	jsonSrc *jsonSource // the JSON Schema object a struct was mapped from
}

// Field is one struct field.
type Field struct {
	GoName   string   // Go identifier, unique in its struct
	WireName string   // name on the wire (Avro field / JSON property)
	Type     *TypeRef // Go type expression
	Doc      []string // doc comment lines
	Optional bool     // JSON: not required (pointer or nil-able, omitempty)
	Default  string   // the schema's default as JSON text, empty when none (documentation only)
	Tags     Tags     // which struct tags to write
	// Union fields (branches) only:
	//
	// Branch is how hamba/avro names the branch ("int", "com.acme.Rec",
	// "long.timestamp-millis", "array", "map").
	Branch string
	// Value is the Go type hamba/avro decodes the branch to when it does
	// not know the field's type (its generic form), which converts to the
	// field's type; nil when the branch must be re-encoded (Source, Path).
	Value *TypeRef
	// Typed says hamba/avro may also hand over the branch typed (every
	// resolver knows its name), as a Value.
	Typed bool
	// Source and Path locate the branch's schema, for re-encoding a record,
	// array or map branch from its generic form: Path walks hamba's schema
	// graph from the root (a field index, 0 for items or values, a union
	// branch index).
	Source *AvroSource
	Path   []int
}

// AvroSource is the text of an Avro schema file, embedded in the generated
// code under Ident (an unexported identifier) for union conversion.
type AvroSource struct {
	Ident     string // the func returning the parsed schema
	TextIdent string // the const holding Text
	Text      string
}

// Tags says which struct tags a field carries.
type Tags struct {
	Avro      bool // avro:"wire"
	JSON      bool // json:"wire"
	OmitEmpty bool // json:",omitempty"
}

// Symbol is one enum constant.
type Symbol struct {
	GoName string   // constant identifier, e.g. SuitSpades
	Value  string   // the symbol as written in the schema
	Doc    []string // doc comment lines
}

// RefKind is the shape of a type expression.
type RefKind int

const (
	// Builtin is a predeclared Go type: string, bool, int32, int64, float32,
	// float64, []byte (Name holds it).
	Builtin RefKind = iota
	// Qual is a type from another package (Pkg and Name), e.g. time.Time.
	Qual
	// Named is a type declared in this universe (Named points to it).
	Named
	// Pointer is *Elem.
	Pointer
	// Slice is []Elem.
	Slice
	// Map is map[string]Elem.
	Map
	// Array is [Len]Elem (Avro fixed).
	Array
)

// TypeRef is a Go type expression.
type TypeRef struct {
	Kind  RefKind
	Name  string   // Builtin or Qual name
	Pkg   string   // Qual import path
	Named *Type    // Named
	Elem  *TypeRef // Pointer, Slice, Map, Array
	Len   int      // Array
}
