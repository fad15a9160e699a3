package runtime

import (
	"context"
	"fmt"
	"sync"

	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/typeimpl"
)

// Format is the wire format of a message type.
type Format int

const (
	FormatText Format = iota
	FormatJSON
	FormatAvro
)

func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatJSON:
		return "json"
	case FormatAvro:
		return "avro"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// MessageType describes one message type on the wire: its AMQP `type`
// property, its format and the schema its codec checks against. Generated
// code declares one package-level MessageType per manifest message, passing
// the schema as a string literal; the schema is compiled on first use, once,
// and a schema that does not compile is an error from that first Publish or
// Consume, never a panic at init.
type MessageType[T any] struct {
	name    string
	format  Format
	subject string
	schema  string

	// check is the generated check of a JSON type (acemqimpl.NewCheckedJSONType).
	check jsoncheck.Checker
	shape func() *jsoncheck.Shape // the check's decode shape
	// enc is the generated encoder of a JSON type's payload
	// (acemqimpl.WithJSONEncoder): json.Marshal's bytes without reflection.
	enc jsoncheck.Encoder
	// dec is the generated decoder of a JSON type's payload
	// (acemqimpl.WithJSONDecoder): json.Unmarshal's value and the decode
	// shape's scan in one pass, without reflection.
	dec jsoncheck.DecodeFunc

	// registry is the type's own registry (the manifest's registry:), used
	// when the connection was dialled without WithSchemaRegistry.
	registry SchemaRegistry

	once sync.Once
	// shared is the codec of a type that needs no registry (text, JSON).
	shared    Codec
	sharedErr error
	// reference is the JSON codec with the reference validator alone, for
	// connections dialled WithReferenceValidation.
	refOnce   sync.Once
	reference Codec
	refErr    error
	// perRegistry caches Avro codecs per registry.
	mu          sync.Mutex
	perRegistry map[SchemaRegistry]Codec
}

// NewTextType is a plain-text message type (text/plain) carrying a string.
func NewTextType(name string) *MessageType[string] {
	declareType(name)
	return &MessageType[string]{name: name, format: FormatText}
}

// NewJSONType is a JSON message type validated against schema (a JSON Schema
// document; empty means no validation) on publish and on consume.
func NewJSONType[T any](name, schema string) *MessageType[T] {
	declareType(name)
	return &MessageType[T]{name: name, format: FormatJSON, schema: schema}
}

// newCheckedJSONType is NewJSONType with a generated check of the payload type
// (acemq-gen emits it, through acemqimpl.NewCheckedJSONType, for a schema
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
	mt.setJSONCheck(check, shape)
	return mt
}

func (mt *MessageType[T]) setJSONCheck(check jsoncheck.Checker, shape func() *jsoncheck.Shape) {
	mt.check, mt.shape = check, shape
}

func (mt *MessageType[T]) jsonCheck() (jsoncheck.Checker, func() *jsoncheck.Shape) {
	return mt.check, mt.shape
}

func (mt *MessageType[T]) setJSONEncoder(enc jsoncheck.Encoder) { mt.enc = enc }

func (mt *MessageType[T]) jsonEncoder() jsoncheck.Encoder { return mt.enc }

func (mt *MessageType[T]) setJSONDecoder(dec jsoncheck.DecodeFunc) { mt.dec = dec }

func (mt *MessageType[T]) jsonDecoder() jsoncheck.DecodeFunc { return mt.dec }

// jsonCheckable is every *MessageType[T], for the facade's hooks.
type jsonCheckable interface {
	setJSONCheck(jsoncheck.Checker, func() *jsoncheck.Shape)
	jsonCheck() (jsoncheck.Checker, func() *jsoncheck.Shape)
	setJSONEncoder(jsoncheck.Encoder)
	jsonEncoder() jsoncheck.Encoder
	setJSONDecoder(jsoncheck.DecodeFunc)
	jsonDecoder() jsoncheck.DecodeFunc
}

func init() {
	typeimpl.SetJSONCheck = func(mt any, check jsoncheck.Checker, shape func() *jsoncheck.Shape) {
		mt.(jsonCheckable).setJSONCheck(check, shape)
	}
	typeimpl.JSONCheckOf = func(mt any) (jsoncheck.Checker, func() *jsoncheck.Shape) {
		return mt.(jsonCheckable).jsonCheck()
	}
	typeimpl.SetJSONEncoder = func(mt any, enc jsoncheck.Encoder) { mt.(jsonCheckable).setJSONEncoder(enc) }
	typeimpl.JSONEncoderOf = func(mt any) jsoncheck.Encoder { return mt.(jsonCheckable).jsonEncoder() }
	typeimpl.SetJSONDecoder = func(mt any, dec jsoncheck.DecodeFunc) { mt.(jsonCheckable).setJSONDecoder(dec) }
	typeimpl.JSONDecoderOf = func(mt any) jsoncheck.DecodeFunc { return mt.(jsonCheckable).jsonDecoder() }
	jsoncheck.NewSchemaError = func(vs []jsoncheck.Violation) error {
		out := make([]Violation, len(vs))
		for i, v := range vs {
			out[i] = Violation(v)
		}
		return &SchemaError{Violations: out}
	}
}

// Validate reports whether v may be published as mt: nil, or the error
// Publish would return for it (one wrapping ErrInvalidMessage and a
// *SchemaError for a value that breaks the schema; the schema's compile
// error for a schema that does not compile). Generated payload types call
// it from their Validate method.
func (mt *MessageType[T]) Validate(v T) error {
	if mt.format != FormatJSON {
		return fmt.Errorf("message type %q: Validate checks JSON types only, this one is %v", mt.name, mt.format)
	}
	if mt.check != nil && jsoncheck.Checked(mt.check, v) {
		if _, err := mt.Codec(nil); err != nil {
			return err
		}
		return nil
	}
	c, err := mt.Codec(nil) // without a generated check: the reference validator
	if mt.check != nil {
		c, err = mt.referenceCodec()
	}
	if err != nil {
		return err
	}
	_, err = c.Encode(context.Background(), v)
	return err
}

// referenceCodec is the JSON codec of mt with the reference validator
// alone, without its generated check.
func (mt *MessageType[T]) referenceCodec() (Codec, error) {
	mt.refOnce.Do(func() {
		mt.reference, mt.refErr = NewJSONCodec(mt.schema)
		if mt.refErr != nil {
			mt.refErr = fmt.Errorf("message type %q: %w", mt.name, mt.refErr)
		}
	})
	return mt.reference, mt.refErr
}

// NewAvroType is an Avro message type in the Confluent wire format;
// schema is the reader schema the code was generated from, registered
// under subject. Its registry is the connection's WithSchemaRegistry, else
// the one WithSchemaRegistry gives among opts (generated code passes the
// manifest's registry: this way), else the process's default
// FingerprintRegistry.
func NewAvroType[T any](name, subject, schema string, opts ...TypeOption) *MessageType[T] {
	declareType(name)
	mt := &MessageType[T]{name: name, format: FormatAvro, subject: subject, schema: schema}
	var cfg typeConfig
	for _, o := range opts {
		o.applyType(&cfg)
	}
	mt.registry = cfg.registry
	return mt
}

// TypeOption configures a message type (NewAvroType). Made by
// WithSchemaRegistry.
type TypeOption interface{ applyType(*typeConfig) }

type typeConfig struct {
	registry SchemaRegistry
}

// registryFor picks the registry of mt on c: the connection's own, else
// the type's, else the process default.
func (mt *MessageType[T]) registryFor(c *Connection) SchemaRegistry {
	switch {
	case c.cfg.registry != nil:
		return c.cfg.registry
	case mt.registry != nil:
		return mt.registry
	}
	return c.registry
}

// codecFor is mt's codec on c.
func (mt *MessageType[T]) codecFor(c *Connection) (Codec, error) {
	if mt.format == FormatJSON && c.cfg.referenceValidation {
		return mt.referenceCodec()
	}
	return mt.Codec(mt.registryFor(c))
}

// Name is the AMQP `type` property of the message type.
func (mt *MessageType[T]) Name() string { return mt.name }

// Format is the message type's wire format.
func (mt *MessageType[T]) Format() Format { return mt.format }

// Schema is the schema text the type was declared with.
func (mt *MessageType[T]) Schema() string { return mt.schema }

// Codec returns the type's codec for a connection's registry.
func (mt *MessageType[T]) Codec(reg SchemaRegistry) (Codec, error) {
	if mt.format != FormatAvro {
		mt.once.Do(func() {
			switch mt.format {
			case FormatText:
				mt.shared = NewTextCodec()
			case FormatJSON:
				var shape *jsoncheck.Shape
				if mt.shape != nil {
					shape = mt.shape()
				}
				mt.shared, mt.sharedErr = newJSONCodecChecked(mt.schema, mt.check, shape)
				if jc, ok := mt.shared.(*jsonCodec); ok {
					jc.enc, jc.dec = mt.enc, mt.dec
				}
			default:
				mt.sharedErr = fmt.Errorf("unknown format %v", mt.format)
			}
			if mt.sharedErr != nil {
				mt.sharedErr = fmt.Errorf("message type %q: %w", mt.name, mt.sharedErr)
			}
		})
		return mt.shared, mt.sharedErr
	}
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if c, ok := mt.perRegistry[reg]; ok {
		return c, nil
	}
	c, err := NewAvroCodec(reg, mt.subject, mt.schema)
	if err != nil {
		return nil, fmt.Errorf("message type %q: %w", mt.name, err)
	}
	if mt.perRegistry == nil {
		mt.perRegistry = map[SchemaRegistry]Codec{}
	}
	mt.perRegistry[reg] = c
	return c, nil
}
