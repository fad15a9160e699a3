package msgtype

import (
	"context"
	"fmt"
	"sync"

	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
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

// Codec turns a message value into a body and back (runtime.Codec).
type Codec interface {
	// ContentType is the AMQP content_type property of what Encode writes.
	ContentType() string
	// Encode returns the body for v. ctx bounds any registry call.
	Encode(ctx context.Context, v any) ([]byte, error)
	// Decode fills v (a pointer) from body. ctx bounds any registry call.
	Decode(ctx context.Context, body []byte, v any) error
}

// SchemaRegistry stores Avro writer schemas by id (runtime.SchemaRegistry).
type SchemaRegistry interface {
	// Register stores schema under subject and returns its id; registering
	// the same schema again returns the same id.
	Register(ctx context.Context, subject, schema string) (int, error)
	// Schema returns the schema registered with id, or an error wrapping
	// ErrSchemaNotFound.
	Schema(ctx context.Context, id int) (string, error)
}

// Codecs makes the codecs of a message type: package runtime's
// constructors, given to New.
type Codecs interface {
	// Text is the text codec.
	Text() Codec
	// JSON is the JSON codec of schema with the type's generated parts
	// (each nil when it has none).
	JSON(schema string, check jsoncheck.Checker, shape *jsoncheck.Shape, enc jsoncheck.Encoder, dec jsoncheck.DecodeFunc) (Codec, error)
	// JSONReference is the JSON codec of schema with the reference
	// validator alone.
	JSONReference(schema string) (Codec, error)
	// Avro is the Avro codec of schema, registered under subject in reg.
	Avro(reg SchemaRegistry, subject, schema string) (Codec, error)
}

// MessageType describes one message type on the wire (runtime.MessageType).
type MessageType[T any] struct {
	name    string
	format  Format
	subject string
	schema  string
	codecs  Codecs

	// check is the generated check of a JSON type (SetJSONCheck).
	check jsoncheck.Checker
	shape func() *jsoncheck.Shape // the check's decode shape
	// enc is the generated encoder of a JSON type's payload
	// (SetJSONEncoder): json.Marshal's bytes without reflection.
	enc jsoncheck.Encoder
	// dec is the generated decoder of a JSON type's payload
	// (SetJSONDecoder): json.Unmarshal's value and the decode shape's scan
	// in one pass, without reflection.
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

// New is a message type named name, of format f, with its schema (and,
// for Avro, its subject and its own registry, nil for none); cs makes its
// codecs.
func New[T any](name string, f Format, subject, schema string, registry SchemaRegistry, cs Codecs) *MessageType[T] {
	return &MessageType[T]{name: name, format: f, subject: subject, schema: schema, registry: registry, codecs: cs}
}

// SetJSONCheck gives a JSON message type the check acemq-gen generated for
// its payload and, when shape is not nil, the decode shape its Decode
// scans a body with. It is called right after the type is made, before
// any use.
func SetJSONCheck[T any](mt *MessageType[T], check jsoncheck.Checker, shape func() *jsoncheck.Shape) {
	mt.check, mt.shape = check, shape
}

// JSONCheckOf returns what SetJSONCheck gave mt (nils when nothing).
func JSONCheckOf[T any](mt *MessageType[T]) (jsoncheck.Checker, func() *jsoncheck.Shape) {
	return mt.check, mt.shape
}

// SetJSONEncoder gives a JSON message type the encoder acemq-gen generated
// for its payload, right after the type is made.
func SetJSONEncoder[T any](mt *MessageType[T], enc jsoncheck.Encoder) { mt.enc = enc }

// JSONEncoderOf returns what SetJSONEncoder gave mt (nil when nothing).
func JSONEncoderOf[T any](mt *MessageType[T]) jsoncheck.Encoder { return mt.enc }

// SetJSONDecoder gives a JSON message type the one-pass decoder acemq-gen
// generated for its payload, right after the type is made.
func SetJSONDecoder[T any](mt *MessageType[T], dec jsoncheck.DecodeFunc) { mt.dec = dec }

// JSONDecoderOf returns what SetJSONDecoder gave mt (nil when nothing).
func JSONDecoderOf[T any](mt *MessageType[T]) jsoncheck.DecodeFunc { return mt.dec }

// Registry is mt's own registry, nil when it has none.
func Registry[T any](mt *MessageType[T]) SchemaRegistry { return mt.registry }

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
				mt.shared = mt.codecs.Text()
			case FormatJSON:
				var shape *jsoncheck.Shape
				if mt.shape != nil {
					shape = mt.shape()
				}
				mt.shared, mt.sharedErr = mt.codecs.JSON(mt.schema, mt.check, shape, mt.enc, mt.dec)
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
	c, err := mt.codecs.Avro(reg, mt.subject, mt.schema)
	if err != nil {
		return nil, fmt.Errorf("message type %q: %w", mt.name, err)
	}
	if mt.perRegistry == nil {
		mt.perRegistry = map[SchemaRegistry]Codec{}
	}
	mt.perRegistry[reg] = c
	return c, nil
}

// ReferenceCodec is the JSON codec of mt with the reference validator
// alone, without its generated check (made once).
func ReferenceCodec[T any](mt *MessageType[T]) (Codec, error) {
	mt.refOnce.Do(func() {
		mt.reference, mt.refErr = mt.codecs.JSONReference(mt.schema)
		if mt.refErr != nil {
			mt.refErr = fmt.Errorf("message type %q: %w", mt.name, mt.refErr)
		}
	})
	return mt.reference, mt.refErr
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
		c, err = ReferenceCodec(mt)
	}
	if err != nil {
		return err
	}
	_, err = c.Encode(context.Background(), v)
	return err
}
