package runtime

import (
	"github.com/acemq/acemq-go/runtime/internal/codec"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/obs"
)

// Format is the wire format of a message type: FormatText, FormatJSON or
// FormatAvro. Its String is "text", "json" or "avro".
type Format = msgtype.Format

// The wire formats.
const (
	FormatText Format = msgtype.FormatText
	FormatJSON Format = msgtype.FormatJSON
	FormatAvro Format = msgtype.FormatAvro
)

// MessageType describes one message type on the wire: its AMQP `type`
// property, its format and the schema its codec checks against. Generated
// code declares one package-level MessageType per manifest message, passing
// the schema as a string literal; the schema is compiled on first use, once,
// and a schema that does not compile is an error from that first Publish or
// Consume, never a panic at init.
//
// Its methods: Name (the AMQP type property), Format, Schema (the text it
// was declared with), Codec(reg) (its codec for a connection's registry)
// and Validate(v) (nil, or the error Publish would return for v; JSON
// types only). It is defined in an internal package, which the runtime and
// the facade for generated code share.
type MessageType[T any] = msgtype.MessageType[T]

// NewTextType is a plain-text message type (text/plain) carrying a string.
func NewTextType(name string) *MessageType[string] {
	obs.DeclareType(name)
	return msgtype.New[string](name, FormatText, "", "", nil, codec.Codecs{})
}

// NewJSONType is a JSON message type validated against schema (a JSON Schema
// document; empty means no validation) on publish and on consume.
func NewJSONType[T any](name, schema string) *MessageType[T] {
	obs.DeclareType(name)
	return msgtype.New[T](name, FormatJSON, "", schema, nil, codec.Codecs{})
}

// newCheckedJSONType is NewJSONType with a generated check of the payload type
// (acemq-gen emits it, through acemqimpl.NewJSONType, for a schema
// whose keywords it can check in plain Go; docs/schema-mapping.md):
// Publish validates a value with check and asks the reference validator
// (santhosh-tekuri/jsonschema) only when check does not pass it, so an
// error is the same as NewJSONType's, its text the reference's.
// WithReferenceValidation turns the check off on a connection.
//
// With a shape, Decode checks too: json.Unmarshal, a scan of the body for
// what the struct cannot show (missing and unknown members, nulls, the
// text of date-times), then check; a body any of them does not pass is
// decoded as NewJSONType decodes it, by the reference.
func newCheckedJSONType[T any](name, schema string, check jsoncheck.Checker, shape func() *jsoncheck.Shape) *MessageType[T] {
	mt := NewJSONType[T](name, schema)
	msgtype.SetJSONCheck(mt, check, shape)
	return mt
}

// NewAvroType is an Avro message type in the Confluent wire format;
// schema is the reader schema the code was generated from, registered
// under subject. Its registry is the connection's WithSchemaRegistry, else
// the one WithSchemaRegistry gives among opts (generated code passes the
// manifest's registry: this way), else the process's default
// registry (registry.Fingerprint).
func NewAvroType[T any](name, subject, schema string, opts ...TypeOption) *MessageType[T] {
	obs.DeclareType(name)
	var cfg typeConfig
	for _, o := range opts {
		o.applyType(&cfg)
	}
	return msgtype.New[T](name, FormatAvro, subject, schema, cfg.registry, codec.Codecs{})
}

// TypeOption configures a message type (NewAvroType). Made by
// WithSchemaRegistry.
type TypeOption interface{ applyType(*typeConfig) }

type typeConfig struct {
	registry SchemaRegistry
}
