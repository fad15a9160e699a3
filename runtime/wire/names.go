package wire

import (
	"strconv"
	"strings"
	"time"
)

// Names of the exchanges the topology declares for every queue.
const (
	// DeadLetterExchange routes the broker's own dead-lettering (TTL, length
	// limits, rejections from outside this library) to q.dlq.
	DeadLetterExchange = "acemq.dlx"
	// RetryExchange binds every rung queue under its own name, for tools.
	RetryExchange = "acemq.retry"
)

// The suffixes of a queue's dead-letter and parked queues, and the infix
// of its rungs (q.retry.<N>s).
const (
	DeadLetterSuffix = ".dlq"
	ParkedSuffix     = ".parked"
	RungInfix        = ".retry."
)

// ReplyQueuePrefix begins the name of every reply queue a Requester declares
// (runtime.WithReplyQueue): a responder replies to a queue of that shape, and to
// direct reply-to addresses, and parks a request whose reply_to is anything
// else unless runtime.WithReplyToAllowed names it.
const ReplyQueuePrefix = "acemq.reply."

// DeadLetterQueue is the name of q's dead-letter queue, q.dlq.
func DeadLetterQueue(q string) string { return q + DeadLetterSuffix }

// ParkedQueue is the name of q's parked queue, q.parked.
func ParkedQueue(q string) string { return q + ParkedSuffix }

// RungQueue is the name of q's rung for a broker wait of d, q.retry.<N>s
// with N the whole seconds of d.
func RungQueue(q string, d time.Duration) string {
	return q + RungInfix + strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// Kind is what a queue derived from another is to it.
type Kind uint8

// The kinds of derived queues.
const (
	DeadLetter Kind = iota + 1 // q.dlq
	Parked                     // q.parked
	Rung                       // q.retry.<N>s
)

// String is dlq, parked or rung.
func (k Kind) String() string {
	switch k {
	case DeadLetter:
		return "dlq"
	case Parked:
		return "parked"
	case Rung:
		return "rung"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Owner is the queue a derived queue belongs to, and what it is to it:
// q and DeadLetter for q.dlq, q and Parked for q.parked, q and Rung for
// q.retry.<N>s (N decimal digits). ok is false for any other name, and for
// a suffix with nothing before it (".dlq" belongs to no queue). A name is
// read by its end only: "a.dlq.b" is a queue of its own.
func Owner(name string) (q string, kind Kind, ok bool) {
	if q, ok := strings.CutSuffix(name, DeadLetterSuffix); ok && q != "" {
		return q, DeadLetter, true
	}
	if q, ok := strings.CutSuffix(name, ParkedSuffix); ok && q != "" {
		return q, Parked, true
	}
	if rest, ok := strings.CutSuffix(name, "s"); ok {
		i := len(rest)
		for i > 0 && '0' <= rest[i-1] && rest[i-1] <= '9' {
			i--
		}
		if q, ok := strings.CutSuffix(rest[:i], RungInfix); ok && i < len(rest) && q != "" {
			return q, Rung, true
		}
	}
	return "", 0, false
}

// IsRung reports whether name is a rung queue, q.retry.<N>s.
func IsRung(name string) bool {
	_, k, ok := Owner(name)
	return ok && k == Rung
}
