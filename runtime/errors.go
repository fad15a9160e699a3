package runtime

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by calls on a Connection or Consumer that was
	// closed.
	ErrClosed = errors.New("acemq: closed")
	// ErrUnroutable is returned by a publish that the broker returned
	// (mandatory): no queue is bound for its exchange and routing key.
	ErrUnroutable = errors.New("acemq: unroutable")
	// ErrNacked is returned by a publish the broker refused (basic.nack).
	ErrNacked = errors.New("acemq: publish refused by the broker")
	// ErrQueueNotFound is returned for a queue that does not exist.
	ErrQueueNotFound = errors.New("acemq: queue not found")
	// ErrExchangeNotFound is returned by a publish to an exchange that does
	// not exist; nothing was sent.
	ErrExchangeNotFound = errors.New("acemq: exchange not found")
	// ErrRegistryUnavailable is wrapped by a schema registry's errors that
	// may pass (a registry that does not answer). A consumer that meets one
	// while decoding returns the message to its queue after a pause instead
	// of parking it.
	ErrRegistryUnavailable = errors.New("acemq: schema registry unavailable")
	// ErrSchemaNotFound is returned by a registry for an unknown id.
	ErrSchemaNotFound = errors.New("acemq: schema not found")
	// ErrInvalidMessage is matched by every error for a message that breaks
	// its schema on publish; such a message is never sent.
	ErrInvalidMessage = errors.New("acemq: invalid message")
)

// PublishError is a publish that failed, with where it was going.
type PublishError struct {
	Exchange   string
	RoutingKey string
	Err        error
}

func (e *PublishError) Error() string {
	ex := e.Exchange
	if ex == "" {
		ex = "(default)"
	}
	return fmt.Sprintf("publish to exchange %s with routing key %q: %v", ex, e.RoutingKey, e.Err)
}

func (e *PublishError) Unwrap() error { return e.Err }

// DeclareError is a topology declaration the broker refused, most often a
// queue or exchange that exists with other arguments.
type DeclareError struct {
	Kind     string // "queue", "exchange" or "binding"
	Name     string
	Argument string // the argument that differs, when the broker named one
	Err      error
}

func (e *DeclareError) Error() string {
	if e.Argument != "" {
		return fmt.Sprintf("declare %s %q: argument %s differs from the one on the broker: %v", e.Kind, e.Name, e.Argument, e.Err)
	}
	return fmt.Sprintf("declare %s %q: %v", e.Kind, e.Name, e.Err)
}

func (e *DeclareError) Unwrap() error { return e.Err }

// DecodeError is a body that its codec could not decode.
type DecodeError struct {
	Queue string
	Type  string
	Err   error
}

func (e *DecodeError) Error() string { return e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }
