package amqpx

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
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
	hint     string // what to do, when the library knows
}

func (e *DeclareError) Error() string {
	if e.Argument != "" {
		return fmt.Sprintf("declare %s %q: argument %s differs from the one on the broker: %v%s", e.Kind, e.Name, e.Argument, e.Err, e.hint)
	}
	return fmt.Sprintf("declare %s %q: %v", e.Kind, e.Name, e.Err)
}

func (e *DeclareError) Unwrap() error { return e.Err }

var inequivalentArg = regexp.MustCompile(`inequivalent arg '([^']+)'`)

func DeclareErrorOf(kind, name string, err error) error {
	de := &DeclareError{Kind: kind, Name: name, Err: err}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		if m := inequivalentArg.FindStringSubmatch(ae.Reason); m != nil {
			de.Argument = m[1]
		}
		if quorumSafety[de.Argument] && strings.Contains(ae.Reason, "current is none") {
			de.hint = "; the queue was declared without it (before every quorum queue got a delivery limit and a dead-letter target), and queue arguments cannot change in place: drain it and declare it again, or move to a new queue name; meanwhile a policy with delivery-limit and dead-letter-exchange covers it (docs/reliability.md, \"Upgrading\")"
		}
	}
	return de
}

// quorumSafety are the arguments every quorum queue now declares.
var quorumSafety = map[string]bool{wire.ArgDeliveryLimit: true, wire.ArgDeadLetterExchange: true, wire.ArgDeadLetterRoutingKey: true}

func IsNotFound(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.NotFound
}
