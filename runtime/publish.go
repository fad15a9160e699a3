package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Publish encodes v with mt's codec and publishes it to exchange, then
// waits for the broker's confirm. The message is mandatory unless
// WithoutMandatory is given: one that no queue takes fails with an error
// matching ErrUnroutable. A message that breaks its schema is an error
// matching ErrInvalidMessage and is never sent; so is one AMQP cannot
// carry: an exchange, routing key, correlation id, type or header name
// (at any depth) over 255 bytes (a short string), a header value of a type
// AMQP has no field for, properties and headers over the broker's
// frame_max. The error names the field and its length; nothing is written,
// so the connection and everything sharing it go on.
//
// ctx bounds every wait: a dial, the write queue, the write and the confirm,
// and any registry call of the codec. Cancelling it does not unsend a
// message already written (it may still reach the broker). While the broker
// blocks the connection (a memory or disk alarm) Publish fails at once with
// an error matching ErrBlocked, nothing sent; during an outage it fails with
// one matching ErrUnavailable: retry later, it is a window, not a state.
func Publish[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, v T, opts ...PublishOption) error {
	return PublishBatch(ctx, c, mt, exchange, []T{v}, opts...)
}

// PublishBatch encodes every value, then publishes them pipelined on one
// channel and waits for every confirm. Nothing is sent unless every value
// encodes; the error of one that does not names its index in vs. The error
// joins one error per failed message, each naming its index (errors.Is and
// errors.As work through it); nil means every message was confirmed.
func PublishBatch[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, vs []T, opts ...PublishOption) error {
	codec, err := core.CodecFor(mt, connLink{c})
	if err != nil {
		return err
	}
	fp, _ := codec.(interface{ SchemaFingerprint() string })
	cfg := publishConfigOf(opts)
	if cfg.messageIDSet && len(vs) > 1 {
		return fmt.Errorf("publish %s to exchange %q: %w: WithMessageID names one message, not a batch of %d", mt.Name(), exchange, ErrInvalidMessage, len(vs))
	}
	var one [1]amqpx.Outgoing // Publish's one message, and its outcome, on the stack
	var oneErr [1]error
	out, errs := one[:], oneErr[:]
	if len(vs) != 1 {
		out, errs = make([]amqpx.Outgoing, len(vs)), make([]error, len(vs))
	}
	for i, v := range vs {
		o, err := encodeOutgoing(ctx, c, mt.Name(), codec, fp, exchange, v, cfg)
		if err != nil {
			if len(vs) > 1 {
				return fmt.Errorf("publish %s to exchange %q: message %d of %d (index %d): %w", mt.Name(), exchange, i+1, len(vs), i, err)
			}
			return fmt.Errorf("publish %s to exchange %q: %w", mt.Name(), exchange, err)
		}
		out[i] = o
	}
	for i := range out {
		if err := c.routeDue(&out[i]); err != nil {
			return fmt.Errorf("publish %s to exchange %q: %w", mt.Name(), exchange, err)
		}
	}
	c.publishInto(ctx, false, out, errs)
	if len(errs) > 1 {
		for i, err := range errs {
			if err != nil {
				errs[i] = fmt.Errorf("message %d of %d (index %d): %w", i+1, len(errs), i, err)
			}
		}
	}
	return errors.Join(errs...)
}

// encodeOutgoing encodes v and builds the message that publishes it.
func encodeOutgoing(ctx context.Context, c *Connection, typ string, codec Codec, fp interface{ SchemaFingerprint() string }, exchange string, v any, cfg publishConfig) (amqpx.Outgoing, error) {
	if err := checkIdentity(cfg); err != nil {
		return amqpx.Outgoing{}, err
	}
	body, err := codec.Encode(ctx, v)
	if err != nil {
		return amqpx.Outgoing{}, err
	}
	o := amqpx.Outgoing{
		Exchange:  exchange,
		Key:       cfg.routingKey,
		Mandatory: !cfg.noMandatory,
		Msg:       c.newPublishing(typ, codec.ContentType(), body, cfg),
	}
	if fv, ok := fp.(interface{ SchemaFingerprintValue() any }); ok {
		o.Msg.Headers[wire.HeaderSchemaFingerprint] = fv.SchemaFingerprintValue()
	} else if fp != nil {
		o.Msg.Headers[wire.HeaderSchemaFingerprint] = fp.SchemaFingerprint()
	}
	if ws, ok := fp.(interface{ WriterSchemaValue() any }); ok {
		if v := ws.WriterSchemaValue(); v != nil {
			o.Msg.Headers[wire.HeaderSchema] = v
		}
	}
	if cfg.delaySet {
		if err := delayDue(&o, cfg.delay); err != nil {
			return amqpx.Outgoing{}, err
		}
	}
	// The frame's size is checked when it is written, against the
	// connection's frame_max (fit).
	if err := amqpx.CheckOutgoing(exchange, o.Key, &o.Msg, 0); err != nil {
		return amqpx.Outgoing{}, err
	}
	return o, nil
}

// newPublishing builds a fresh message: a new x-acemq-id, attempt 1, first
// seen now, persistent.
func (c *Connection) newPublishing(typ, contentType string, body []byte, cfg publishConfig) amqp.Publishing {
	now := time.Now()
	id, seen := core.NewIDAndSeen(now)
	if cfg.messageIDSet {
		id = cfg.messageID
	}
	h := make(amqp.Table, len(cfg.headers)+5) // room for a schema fingerprint
	for k, v := range cfg.headers {
		h[k] = v
	}
	h[wire.HeaderID] = id
	h[wire.HeaderAttempt] = int64(1)
	h[wire.HeaderFirstSeen] = seen
	h[wire.HeaderOrigin] = c.originValue()
	return amqp.Publishing{
		Headers:       h,
		ContentType:   contentType,
		DeliveryMode:  amqp.Persistent,
		CorrelationId: cfg.correlationID,
		MessageId:     id,
		Timestamp:     now.Truncate(time.Second),
		Type:          typ,
		Body:          body,
	}
}

// originValue is x-acemq-origin as a header's value, boxed once.
func (c *Connection) originValue() any {
	if c.origin != nil {
		return c.origin
	}
	return c.cfg.origin
}
