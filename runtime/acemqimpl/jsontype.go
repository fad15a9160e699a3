package acemqimpl

import "github.com/acemq/acemq-go/runtime"

// JSONFuncs is the code acemq-gen generated for a JSON message type's
// payload, each part nil when there is none: Check and Shape as
// NewCheckedJSONType takes them, Encode as WithJSONEncoder, Decode as
// WithJSONDecoder.
type JSONFuncs struct {
	Check  JSONChecker
	Shape  func() *JSONShape
	Encode JSONEncoder
	Decode JSONDecodeFunc
}

// NewJSONType is runtime.NewJSONType with the generated code of fns, in
// one call: NewCheckedJSONType when fns has a Check, then WithJSONEncoder
// and WithJSONDecoder for its Encode and Decode. Generated code declares
// each JSON message type that has generated code with it.
func NewJSONType[T any](name, schema string, fns JSONFuncs) *runtime.MessageType[T] {
	var mt *runtime.MessageType[T]
	if fns.Check != nil {
		mt = NewCheckedJSONType[T](name, schema, fns.Check, fns.Shape)
	} else {
		mt = runtime.NewJSONType[T](name, schema)
	}
	if fns.Encode != nil {
		mt = WithJSONEncoder(mt, fns.Encode)
	}
	if fns.Decode != nil {
		mt = WithJSONDecoder(mt, fns.Decode)
	}
	return mt
}
