package core

import (
	"errors"
	"fmt"
)

// AckKind is what a handler decided about a message.
type AckKind int

const (
	// AckAccept settles the message: it is done.
	AckAccept AckKind = iota
	// AckRetry asks for another attempt, as the retry policy allows.
	AckRetry
	// AckReject sends the message to the dead-letter queue at once.
	AckReject
	// AckPark sends the message to the parked queue at once.
	AckPark
)

func (k AckKind) String() string {
	switch k {
	case AckAccept:
		return "accept"
	case AckRetry:
		return "retry"
	case AckReject:
		return "reject"
	case AckPark:
		return "park"
	}
	return fmt.Sprintf("AckKind(%d)", int(k))
}

// Ack is a handler's outcome. Build one with Accept, Retry, Reject or Park.
// The zero value is Accept.
type Ack struct {
	kind AckKind
	err  error
}

// Accept settles the message.
func Accept() Ack { return Ack{kind: AckAccept} }

// Retry asks for another attempt. The message is republished with
// x-acemq-attempt advanced after the policy's delay, or dead-lettered with
// "gave up after N attempts: <err>" when no attempt is left. An err that
// wraps a Fatal error makes this a Reject.
func Retry(err error) Ack { return Ack{kind: AckRetry, err: err} }

// Reject sends the message straight to the dead-letter queue with
// "rejected by the handler: <err>".
func Reject(err error) Ack { return Ack{kind: AckReject, err: err} }

// Park sends the message straight to the parked queue with
// "parked by the handler: <err>".
func Park(err error) Ack { return Ack{kind: AckPark, err: err} }

// Kind reports what the handler decided, after applying Fatal: a Retry whose
// error wraps a Fatal error is AckReject.
func (a Ack) Kind() AckKind {
	if a.kind == AckRetry && a.err != nil && errors.Is(a.err, ErrFatal) {
		return AckReject
	}
	return a.kind
}

// Err is the reason the handler gave, or nil for Accept.
func (a Ack) Err() error { return a.err }

func (a Ack) String() string {
	if a.err == nil {
		return a.Kind().String()
	}
	return a.Kind().String() + ": " + a.err.Error()
}

// ErrFatal is matched by errors.Is for every error made by Fatal.
var ErrFatal = errors.New("fatal")

type fatalError struct{ err error }

func (e *fatalError) Error() string {
	if e.err == nil {
		return "fatal"
	}
	return e.err.Error()
}
func (e *fatalError) Unwrap() []error { return []error{ErrFatal, e.err} }

// Fatal marks err as not worth retrying: wherever it is returned, inside
// Retry or wrapped further up a call stack, the message is rejected to the
// dead-letter queue instead of climbing the retry ladder. Its text is err's.
func Fatal(err error) error { return &fatalError{err: err} }

// Reason is the text an error leaves in x-acemq-error.
func Reason(err error) string {
	if err == nil {
		return "no reason given"
	}
	return err.Error()
}
