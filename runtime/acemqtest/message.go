package acemqtest

import (
	"context"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
	"github.com/google/uuid"
)

// MessageOption sets a field of a message built by NewMessage or Delivered.
type MessageOption func(*messageConfig)

type messageConfig struct {
	envelope    runtime.Envelope
	headers     map[string]any
	routingKey  string
	redelivered bool
}

// WithAttempt sets Envelope.Attempt (1-based): the handler sees a message on
// its n-th delivery.
func WithAttempt(n int) MessageOption {
	return func(c *messageConfig) { c.envelope.Attempt = n }
}

// WithLastError sets Envelope.Error, the previous failure's reason that a
// retried message carries in x-acemq-error.
func WithLastError(reason string) MessageOption {
	return func(c *messageConfig) { c.envelope.Error = reason }
}

// WithHeader adds an application header to Message.Headers.
func WithHeader(key string, value any) MessageOption {
	return func(c *messageConfig) {
		if c.headers == nil {
			c.headers = map[string]any{}
		}
		c.headers[key] = value
	}
}

// WithRoutingKey sets Message.RoutingKey.
func WithRoutingKey(key string) MessageOption {
	return func(c *messageConfig) { c.routingKey = key }
}

// WithRedelivered sets Message.Redelivered, as on a delivery the broker
// sent again after a lost connection.
func WithRedelivered() MessageOption {
	return func(c *messageConfig) { c.redelivered = true }
}

// WithEnvelope lets f change any field of the envelope.
func WithEnvelope(f func(*runtime.Envelope)) MessageOption {
	return func(c *messageConfig) { f(&c.envelope) }
}

// NewMessage is the *runtime.Message a handler receives for payload, as on
// a fresh publish: a new x-acemq-id, attempt 1, first seen now, origin
// "acemqtest". Options change it.
func NewMessage[T any](payload T, opts ...MessageOption) *runtime.Message[T] {
	cfg := messageConfig{envelope: runtime.Envelope{
		ID:        newID(),
		Attempt:   1,
		FirstSeen: time.Now().UTC().Truncate(time.Millisecond),
		Origin:    "acemqtest",
	}}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.envelope.Attempt < 1 {
		cfg.envelope.Attempt = 1
	}
	headers := cfg.headers
	if headers == nil {
		headers = map[string]any{}
	}
	return &runtime.Message[T]{
		Payload:     payload,
		Envelope:    cfg.envelope,
		Headers:     headers,
		RoutingKey:  cfg.routingKey,
		Redelivered: cfg.redelivered,
	}
}

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Delivered is NewMessage for a payload that went through mt's codec, as a
// publish and a delivery would take it: the payload is encoded (checked
// against mt's schema: a payload that breaks it fails the test with the
// error Publish would return) and decoded back, so the handler sees what a
// consumer would decode. Envelope.Type and ContentType are mt's.
func Delivered[T any](tb TB, mt *runtime.MessageType[T], payload T, opts ...MessageOption) *runtime.Message[T] {
	tb.Helper()
	ctx := context.Background()
	codec, err := mt.Codec(registry.NewMemory())
	if err != nil {
		tb.Fatalf("acemqtest: message type %s: %v", mt.Name(), err)
		return nil
	}
	body, err := codec.Encode(ctx, payload)
	if err != nil {
		tb.Fatalf("acemqtest: a publish of this %s would fail: %v", mt.Name(), err)
		return nil
	}
	var decoded T
	if err := codec.Decode(ctx, body, &decoded); err != nil {
		tb.Fatalf("acemqtest: a consumer would park this %s: could not be decoded: %v", mt.Name(), err)
		return nil
	}
	m := NewMessage(decoded, opts...)
	m.Envelope.Type = mt.Name()
	m.Envelope.ContentType = codec.ContentType()
	return m
}

func newID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}
