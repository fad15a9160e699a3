package runtime

import "github.com/acemq/acemq-go/runtime/internal/core"

// AckKind is what a handler decided about a message.
type AckKind = core.AckKind

const (
	// AckAccept settles the message: it is done.
	AckAccept AckKind = core.AckAccept
	// AckRetry asks for another attempt, as the retry policy allows.
	AckRetry = core.AckRetry
	// AckReject sends the message to the dead-letter queue at once.
	AckReject = core.AckReject
	// AckPark sends the message to the parked queue at once.
	AckPark = core.AckPark
)

// Ack is a handler's outcome. Build one with Accept, Retry, Reject or Park.
// The zero value is Accept. Its methods: Kind (what the handler decided,
// after applying Fatal: a Retry whose error wraps a Fatal error is
// AckReject), Err (the reason the handler gave, or nil for Accept) and
// String.
type Ack = core.Ack

// Accept settles the message.
func Accept() Ack { return core.Accept() }

// Retry asks for another attempt. The message is republished with
// x-acemq-attempt advanced after the policy's delay, or dead-lettered with
// "gave up after N attempts: <err>" when no attempt is left. An err that
// wraps a Fatal error makes this a Reject.
func Retry(err error) Ack { return core.Retry(err) }

// Reject sends the message straight to the dead-letter queue with
// "rejected by the handler: <err>".
func Reject(err error) Ack { return core.Reject(err) }

// Park sends the message straight to the parked queue with
// "parked by the handler: <err>".
func Park(err error) Ack { return core.Park(err) }

// ErrFatal is matched by errors.Is for every error made by Fatal.
var ErrFatal = core.ErrFatal

// Fatal marks err as not worth retrying: wherever it is returned, inside
// Retry or wrapped further up a call stack, the message is rejected to the
// dead-letter queue instead of climbing the retry ladder. Its text is err's.
func Fatal(err error) error { return core.Fatal(err) }
