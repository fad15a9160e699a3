package acemqimpl

import (
	"time"

	"github.com/acemq/acemq-go/runtime/internal/avrounion"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/hamba/avro/v2"
)

// SupportPackageIsVersion2 is referenced by generated code
// (`const _ = acemqimpl.SupportPackageIsVersion2`). A runtime that no
// longer supports the code a generator emitted drops the constant, and
// the generated package stops compiling instead of misbehaving. Version 2
// declares a JSON type with its generated code in one NewJSONType call
// and publishes through PublishOptions; version 1's code (nested
// NewCheckedJSONType, WithJSONEncoder and WithJSONDecoder) is no longer
// supported: run acemq-gen again.
const SupportPackageIsVersion2 = true

// JSONChecker is a generated check of a typed value against the JSON
// Schema of its message type, in plain Go: it reports to c every violation
// that validating json.Marshal(v) would find, and returns false when v is
// not of the type it checks (the codec then validates the marshalled
// document, as for a type without a check). acemq-gen emits one per
// message type whose schema uses only keywords it can check
// (docs/schema-mapping.md); the codec trusts a check that finds nothing and
// asks the reference validator (santhosh-tekuri/jsonschema) about
// everything else, so an error's text is always the reference's.
type JSONChecker = jsoncheck.Checker

// JSONCheck collects what a generated check finds (Fail, Undecided,
// Decoded are what a generated check calls). The zero value is ready to
// use. Its Err is nil or a *runtime.SchemaError.
type JSONCheck = jsoncheck.Check

// JSONAt is a location in the document a generated check walks: member
// Key of Up, or its element Index when Item is set. A nil *JSONAt is the
// document itself. Generated code builds them on the stack; Fail copies
// what it needs.
type JSONAt = jsoncheck.At

// JSONShape is what a decode check needs to know of a JSON value beside
// the typed struct encoding/json fills: which members an object must have,
// which it may not, where null is allowed, and which strings must be
// date-times. acemq-gen writes one per checked message type; the runtime
// scans the body with it after json.Unmarshal succeeded.
type JSONShape = jsoncheck.Shape

// JSONMember is one property of a JSONObject shape.
type JSONMember = jsoncheck.Member

// JSONShapeKind is what a JSONShape describes.
type JSONShapeKind = jsoncheck.ShapeKind

// The kinds of JSONShape.
const (
	JSONAny    = jsoncheck.Any    // any value (a scalar, or json.RawMessage)
	JSONObject = jsoncheck.Object // a struct
	JSONArray  = jsoncheck.Array  // a slice
	JSONMap    = jsoncheck.Map    // a map
	JSONString = jsoncheck.String // a string with a Format to check on its text
	JSONNumber = jsoncheck.Number // a float64 with bounds to check on its text
)

// JSONFormat is the reference validator's own check of a JSON Schema
// format ("uuid", "email", "date", ...), for generated checks: true when s
// is of the format. It is nil for a name the validator does not assert.
func JSONFormat(name string) func(s string) bool { return jsoncheck.Format(name) }

// JSONEncoder is a generated encoder of a typed value: it appends to b the
// bytes json.Marshal(v) would return, and returns false when it does not
// take v or json.Marshal would fail (the codec then calls json.Marshal,
// whose error is the codec's). acemq-gen emits one per JSON message type
// whose payload is a struct.
type JSONEncoder = jsoncheck.Encoder

// AppendJSONString appends s as json.Marshal writes a string (<, > and &
// escaped, U+2028 and U+2029 escaped, a byte that is not UTF-8 as
// \ufffd), for generated encoders.
func AppendJSONString(b []byte, s string) []byte { return jsoncheck.AppendString(b, s) }

// AppendJSONFloat64 appends f as json.Marshal writes a float64; false for
// NaN and the infinities, which json.Marshal refuses.
func AppendJSONFloat64(b []byte, f float64) ([]byte, bool) { return jsoncheck.AppendFloat(b, f, 64) }

// AppendJSONFloat32 appends f as json.Marshal writes a float32; false for
// NaN and the infinities.
func AppendJSONFloat32(b []byte, f float32) ([]byte, bool) {
	return jsoncheck.AppendFloat(b, float64(f), 32)
}

// AppendJSONTime appends t as json.Marshal writes a time.Time; false when
// its MarshalJSON would fail.
func AppendJSONTime(b []byte, t time.Time) ([]byte, bool) { return jsoncheck.AppendTime(b, t) }

// AppendJSONValue appends json.Marshal(v), for a value a generated encoder
// does not write out itself; false when json.Marshal fails.
func AppendJSONValue(b []byte, v any) ([]byte, bool) { return jsoncheck.AppendValue(b, v) }

// JSONMapKeys is m's keys in the order json.Marshal writes a map's
// members (sorted by bytes).
func JSONMapKeys[V any](m map[string]V) []string { return jsoncheck.MapKeys(m) }

// JSONDecodeFunc is a generated one-pass decoder of a JSON body into a
// typed value: true only when *v is then exactly json.Unmarshal's value
// (in a zero value) and the decode shape's scan finds nothing in the body;
// false, *v zeroed, for anything it does not read exactly as encoding/json
// does (the codec then decodes as without it, so every error stays the
// existing path's). acemq-gen emits one per JSON message type whose
// payload's structs it can decode this way.
type JSONDecodeFunc = jsoncheck.DecodeFunc

// JSONDecoder is the strict lexer a generated decoder reads a body with
// (Shape, BeginObject, NextMember, Field, EndObject, BeginArray,
// NextElem, EndArray, Time, End; DecodeJSONString and the other
// DecodeJSON functions read scalars).
type JSONDecoder = jsoncheck.Decoder

// JSONObjectState is what a generated decoder keeps of an object it reads.
type JSONObjectState = jsoncheck.ObjectState

// JSONArrayState is what a generated decoder keeps of an array it reads.
type JSONArrayState = jsoncheck.ArrayState

// JSONSliceBuf is where a generated decoder reads an array's elements
// (Next, then Slice): the first four on the stack.
type JSONSliceBuf[T any] = jsoncheck.SliceBuf[T]

// DecodeJSONString reads a JSON string without escapes into *p (a string,
// or a named string type), for generated decoders; false for anything
// else, or a string the shape's format refuses.
func DecodeJSONString[T ~string](d *JSONDecoder, p *T, sh *JSONShape) bool {
	return jsoncheck.DecodeString(d, p, sh)
}

// DecodeJSONBool reads true or false into *p, for generated decoders.
func DecodeJSONBool[T ~bool](d *JSONDecoder, p *T, sh *JSONShape) bool {
	return jsoncheck.DecodeBool(d, p, sh)
}

// DecodeJSONInt reads an integer into *p as encoding/json does, for
// generated decoders; false for a fraction, an exponent, one that does
// not fit, or one out of the shape's bounds.
func DecodeJSONInt[T ~int | ~int8 | ~int16 | ~int32 | ~int64](d *JSONDecoder, p *T, sh *JSONShape) bool {
	return jsoncheck.DecodeInt(d, p, sh)
}

// DecodeJSONFloat reads a number into *p as encoding/json does
// (strconv.ParseFloat with T's bits), for generated decoders; false when
// that fails, or the number is out of the shape's bounds.
func DecodeJSONFloat[T ~float32 | ~float64](d *JSONDecoder, p *T, sh *JSONShape) bool {
	return jsoncheck.DecodeFloat(d, p, sh)
}

// ConvertAvroBranch turns the generic value v that hamba/avro decoded for
// a branch of an Avro union into out, a pointer to the branch's Go type,
// by encoding v with the branch's schema and decoding the bytes into out.
// The branch's schema is found by walking path from the schema root
// returns: a field index in a record, 0 for an array's items or a map's
// values, a branch index in a union. The code acemq-gen generates for a
// general union (its FromAny method) calls it; every union-using package
// shares this one copy.
func ConvertAvroBranch(root func() (avro.Schema, error), path []int, v, out any) error {
	return avrounion.ConvertBranch(root, path, v, out)
}
