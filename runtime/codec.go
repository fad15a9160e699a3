package runtime

import (
	"context"

	"github.com/acemq/acemq-go/runtime/wire"
)

// Content types the runtime's codecs write and accept.
const (
	ContentTypeText = wire.ContentTypeText
	ContentTypeJSON = wire.ContentTypeJSON
	ContentTypeAvro = wire.ContentTypeAvro
)

// Codec turns a message value into a body and back. Generated code picks one
// per message type (see MessageType); Encode and Decode must be safe for
// concurrent use.
//
// An error from Decode parks the message with
// "could not be decoded: <error>", so it should say where and what:
// "/customer_id: missing property", not "invalid".
type Codec interface {
	// ContentType is the AMQP content_type property of what Encode writes.
	ContentType() string
	// Encode returns the body for v. ctx bounds any registry call.
	Encode(ctx context.Context, v any) ([]byte, error)
	// Decode fills v (a pointer) from body. ctx bounds any registry call.
	Decode(ctx context.Context, body []byte, v any) error
}

// SchemaRegistry stores Avro writer schemas by id, as the Confluent wire
// format needs: the publisher registers its schema under a subject and
// writes the id in each body; the consumer looks the writer schema up by
// that id. Implementations must be safe for concurrent use.
type SchemaRegistry interface {
	// Register stores schema under subject and returns its id; registering
	// the same schema again returns the same id.
	Register(ctx context.Context, subject, schema string) (int, error)
	// Schema returns the schema registered with id, or an error wrapping
	// ErrSchemaNotFound.
	Schema(ctx context.Context, id int) (string, error)
}

// opener is a registry that can be opened ahead of its first use
// (registry.OpenLazy's): a Consume whose Avro types use it opens it before
// subscribing, so that a bad configuration fails the Consume rather than
// every message.
type opener interface{ OpenNow() error }
