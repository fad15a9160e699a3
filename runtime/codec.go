package runtime

import (
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

// opener is a registry that can be opened ahead of its first use
// (registry.OpenLazy's): a Consume whose Avro types use it opens it before
// subscribing, so that a bad configuration fails the Consume rather than
// every message.
type opener interface{ OpenNow() error }
