package runtime

import (
	"context"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/codec"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
)

// Codec turns a message value into a body and back. Generated code picks one
// per message type (see MessageType); Encode and Decode must be safe for
// concurrent use.
//
// An error from Decode parks the message with
// "could not be decoded: <error>", so it should say where and what:
// "/customer_id: missing property", not "invalid".
//
// Its methods: ContentType (the AMQP content_type of what Encode writes),
// Encode(ctx, v) (the body for v; ctx bounds any registry call) and
// Decode(ctx, body, v) (fills the pointer v from body).
type Codec = msgtype.Codec

// SchemaRegistry stores Avro writer schemas by id, as the Confluent wire
// format needs: the publisher registers its schema under a subject and
// writes the id in each body; the consumer looks the writer schema up by
// that id. Implementations must be safe for concurrent use.
//
// Its methods: Register(ctx, subject, schema) stores schema under subject
// and returns its id (registering the same schema again returns the same
// id); Schema(ctx, id) returns the schema registered with id, or an error
// wrapping ErrSchemaNotFound.
type SchemaRegistry = msgtype.SchemaRegistry

// Violation is one way a JSON document breaks its schema: Location is the
// JSON Pointer of the offending value in the document, "/items/0/sku" (the
// document itself is "/"); Message says what is wrong there, in the
// validator's words: "missing property", "got string, want integer". Its
// String is "<location>: <message>".
type Violation = jsoncheck.Violation

// SchemaError is a JSON document that breaks its JSON Schema: its
// Violations, and as its text the violations sorted and joined with "; ",
// the first ten spelled out:
//
//	/customer_id: missing property; /items/0/qty: got string, want integer
//
// On Encode it is wrapped together with ErrInvalidMessage (so both
// errors.Is(err, ErrInvalidMessage) and errors.As(err, **SchemaError)
// hold); on Decode it is returned as it is, which makes the parked reason
// "could not be decoded: <where>: <what>".
type SchemaError = jsoncheck.SchemaError

// MaxCarriedSchema is the longest writer schema Publish carries in
// x-acemq-schema; a longer one is not carried (its readers need a shared
// registry), and a longer header is not read.
const MaxCarriedSchema = codec.MaxCarriedSchema

// NewAvroCodec returns the Avro codec for schema (the reader schema the
// code was generated from), registered in reg under subject. The schema is
// parsed here: one that does not parse is an error, never a panic.
//
// The body is the Confluent wire format: the magic byte 0x00, the schema id
// as 4 bytes big-endian, then the Avro binary encoding; the content type is
// application/vnd.apache.avro+binary. Encode registers the schema on first
// use (ctx bounds that call; a failed registration is retried on the next
// Encode) and writes with it; a value that does not fit the schema is an
// error wrapping ErrInvalidMessage. Decode looks the writer schema up by
// the body's id (ctx bounds that call; parsed writer schemas are cached by
// id) and, when it differs from the reader schema, resolves it onto the
// reader schema with Avro's rules, so a field the writer lacks is filled
// with its default; a pair that cannot resolve is an error naming the field.
//
// Go values use `avro:"name"` struct tags; logical types map to time.Time
// (timestamp-millis, timestamp-micros, date), *big.Rat (decimal) and string
// (uuid). The codec only uses reg through the msgtype.SchemaRegistry interface, so
// any registry (in memory, files, Confluent HTTP) fits. Safe for concurrent
// use.
func NewAvroCodec(reg SchemaRegistry, subject, schema string) (Codec, error) {
	return codec.NewAvroCodec(reg, subject, schema)
}

// NewJSONCodec returns the application/json codec validating against
// schema, a JSON Schema document given as text; an empty schema means no
// validation. The schema is compiled once, here: a schema that is not JSON
// or does not compile is an error, never a panic. The draft is the one its
// $schema names (draft 4, 6, 7, 2019-09, 2020-12), 2020-12 when it names
// none. `format` is asserted in every draft (date-time, date, uuid, email,
// ipv4, ...). The schema must be self-contained: $ref may point inside it
// ($defs, definitions, $id'd subschemas) but never to a file or URL, which
// the codec does not load.
//
// Encode is json.Marshal, then validation: a value that breaks the schema
// is an error wrapping ErrInvalidMessage and a *SchemaError. Decode refuses
// a body that is not JSON ("this message is not JSON: ..."), then one that
// breaks the schema (a *SchemaError, "<where>: <what>"), then unmarshals
// into v. The codec is safe for concurrent use and ignores ctx.
//
// Validation is santhosh-tekuri/jsonschema's (the reference validator)
// and nothing else: the body is parsed into the tree the validator takes
// and validated, so verdicts and error texts are the validator's. That is
// the slow path (docs/codecs.md gives its cost); a message type with
// generated code (acemq-gen's checks, encoder and decoder) passes what its
// generated check shows valid without building the tree.
func NewJSONCodec(schema string) (Codec, error) { return codec.NewJSONCodec(schema) }

// DefaultMaxBodySize is the largest body a consumer decodes unless
// WithMaxBodySize says otherwise: 1 MiB. A larger body is parked unread.
const DefaultMaxBodySize = core.DefaultMaxBodySize

// ReceivedAt is when the consumer received from the broker the delivery
// whose handler (or middleware) ctx is, and true; outside a consumer's
// handler it is the zero time and false. From then on the delivery is
// unacknowledged, whatever waits before its handler runs (the deliveries
// ahead of it in the prefetch): a middleware that holds a delivery (for a
// store that does not answer, as pgstore's inbox and redisstore's dedup
// do) bounds the hold from here, so that the last delivery of a full
// prefetch stays under the broker's consumer timeout as the first does.
func ReceivedAt(ctx context.Context) (time.Time, bool) { return core.ReceivedAt(ctx) }
