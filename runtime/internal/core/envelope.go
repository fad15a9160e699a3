package core

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Header names of the wire contract shared with the sibling libraries.
const (

	// InternalPrefix is the namespace stripped from Message.Headers.
	InternalPrefix = wire.InternalPrefix
)

// FirstSeenLayout is RFC 3339 in UTC with milliseconds.
const FirstSeenLayout = "2006-01-02T15:04:05.000Z"

// MaxErrorLen caps x-acemq-error so the header table stays far below the
// broker's frame size (131072 bytes; a larger one closes the connection).
const MaxErrorLen = 4096

// Envelope is what the runtime knows about a message besides its payload.
type Envelope struct {
	ID            string // x-acemq-id, kept for life
	CorrelationID string // correlation_id
	// ReplyTo is a request's reply_to, where its reply goes (a consumer's
	// deliveries only; see HandleRequest).
	ReplyTo   string
	Type      string    // the AMQP type property
	Origin    string    // x-acemq-origin
	FirstSeen time.Time // x-acemq-first-seen; zero when absent
	Attempt   int       // x-acemq-attempt, 1-based
	// Error is x-acemq-error, the last failure's reason. A message the
	// broker dead-lettered on its own (no x-acemq-queue, an x-death) reads
	// "dead-lettered by the broker: <reason>", e.g. delivery_limit, with
	// any earlier x-acemq-error after it as "(last failure: …)".
	Error       string
	ContentType string
	// Queue is x-acemq-queue, where a dead letter or parked message came
	// from; for one the broker dead-lettered, the queue it left (x-death).
	Queue string

	ReplayedFrom string    // acemq-replayed-from
	ReplayedAt   time.Time // acemq-replayed-at
	ReplayCount  int       // acemq-replay-count
}

// EnvelopeOf reads an Envelope from AMQP properties and headers. Garbled
// values never fail: a bad attempt is 1, a bad time is zero.
func EnvelopeOf(headers map[string]any, messageID, correlationID, typ, contentType string) Envelope {
	e, _ := EnvelopeAndApps(headers, messageID, correlationID, typ, contentType)
	return e
}

// EnvelopeAndApps is EnvelopeOf, and how many application headers (not
// x-acemq-*) the table holds, or -1 when that was not counted (a table
// past EnvelopeScanMax).
func EnvelopeAndApps(headers map[string]any, messageID, correlationID, typ, contentType string) (Envelope, int) {
	h := ReadEnvelopeHeaders(headers, len(headers) <= EnvelopeScanMax)
	e := Envelope{
		ID:            stringValue(h.id),
		CorrelationID: correlationID,
		Type:          typ,
		Origin:        stringValue(h.origin),
		Attempt:       int(PositiveInt(h.attempt, 1)),
		Error:         stringValue(h.err),
		ContentType:   contentType,
		Queue:         stringValue(h.queue),
		ReplayedFrom:  stringValue(h.replayedFrom),
		ReplayCount:   int(PositiveInt(h.replayCount, 0)),
	}
	if e.ID == "" {
		e.ID = messageID
	}
	if e.Queue == "" {
		e.brokerDeath(brokerDeathOf(h.xDeath, h.lastDeathQueue, h.lastDeathReason, h.firstDeathQueue, h.firstDeathReason))
	}
	e.FirstSeen = TimeValue(h.firstSeen)
	e.ReplayedAt = TimeValue(h.replayedAt)
	return e, h.apps
}

// EnvelopeHeaders are the values of the headers an Envelope is read
// from (nil where absent).
type EnvelopeHeaders struct {
	id, origin, attempt, err, queue, replayedFrom, replayCount, firstSeen, replayedAt any
	// the broker's dead-lettering (BrokerDeath)
	xDeath, lastDeathQueue, lastDeathReason, firstDeathQueue, firstDeathReason any
	// apps counts the application headers (not x-acemq-*); -1 when not
	// counted (read by lookups).
	apps int
}

// EnvelopeScanMax is the most headers whose envelope values are found in
// one pass over the table; a larger table is looked up key by key. A
// delivery carries a handful (the runtime's four or five): one pass over
// them costs a seventh of the fourteen lookups (issue 23, the consume
// path).
const EnvelopeScanMax = 16

// ReadEnvelopeHeaders reads the envelope's headers from h, in one pass
// over it when scan, else one lookup each: the same values either way.
func ReadEnvelopeHeaders(h map[string]any, scan bool) (e EnvelopeHeaders) {
	if !scan {
		return EnvelopeHeaders{
			id: h[wire.HeaderID], origin: h[wire.HeaderOrigin], attempt: h[wire.HeaderAttempt], err: h[wire.HeaderError],
			queue: h[wire.HeaderQueue], replayedFrom: h[wire.HeaderReplayedFrom], replayCount: h[wire.HeaderReplayCount],
			firstSeen: h[wire.HeaderFirstSeen], replayedAt: h[wire.HeaderReplayedAt],
			xDeath: h[headerXDeath], lastDeathQueue: h[headerLastDeathQueue], lastDeathReason: h[headerLastDeathReason],
			firstDeathQueue: h[headerFirstDeathQueue], firstDeathReason: h[headerFirstDeathReason],
			apps: -1,
		}
	}
	for k, v := range h {
		if !strings.HasPrefix(k, InternalPrefix) {
			e.apps++
		}
		switch k {
		case wire.HeaderID:
			e.id = v
		case wire.HeaderOrigin:
			e.origin = v
		case wire.HeaderAttempt:
			e.attempt = v
		case wire.HeaderError:
			e.err = v
		case wire.HeaderQueue:
			e.queue = v
		case wire.HeaderReplayedFrom:
			e.replayedFrom = v
		case wire.HeaderReplayCount:
			e.replayCount = v
		case wire.HeaderFirstSeen:
			e.firstSeen = v
		case wire.HeaderReplayedAt:
			e.replayedAt = v
		case headerXDeath:
			e.xDeath = v
		case headerLastDeathQueue:
			e.lastDeathQueue = v
		case headerLastDeathReason:
			e.lastDeathReason = v
		case headerFirstDeathQueue:
			e.firstDeathQueue = v
		case headerFirstDeathReason:
			e.firstDeathReason = v
		}
	}
	return e
}

// AttemptOf reads x-acemq-attempt: absent, garbled, below 1 or out of range
// is attempt 1.
func AttemptOf(headers map[string]any) int {
	return int(PositiveInt(headers[wire.HeaderAttempt], 1))
}

// PositiveInt reads a header value written as any integer, float or numeric
// string; anything else, or a value below 1 or beyond int32, is def.
func PositiveInt(v any, def int64) int64 {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int8:
		n = int64(x)
	case int16:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case uint8:
		n = int64(x)
	case uint16:
		n = int64(x)
	case uint32:
		n = int64(x)
	case uint64:
		if x > math.MaxInt32 {
			return def
		}
		n = int64(x)
	case float32:
		return PositiveInt(float64(x), def)
	case float64:
		if math.IsNaN(x) || x != math.Trunc(x) || x < 1 || x > math.MaxInt32 {
			return def
		}
		n = int64(x)
	case string:
		p, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return def
		}
		n = p
	case []byte:
		return PositiveInt(string(x), def)
	default:
		return def
	}
	if n < 1 || n > math.MaxInt32 {
		return def
	}
	return n
}

func HeaderString(h map[string]any, k string) string { return stringValue(h[k]) }

// stringValue is a header's value read as a string ("" when it is none).
func stringValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

func HeaderTime(h map[string]any, k string) time.Time { return TimeValue(h[k]) }

// TimeValue is a header's value read as a time (zero when it is none).
func TimeValue(v any) time.Time {
	switch v := v.(type) {
	case time.Time:
		return v.UTC()
	case string:
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// FormatTime is t as x-acemq-first-seen (and the replay stamps) write it:
// FirstSeenLayout in UTC.
func FormatTime(t time.Time) string {
	var b [seenLen]byte
	return string(appendFirstSeen(b[:0], t))
}

// CapReason cuts an error text to MaxErrorLen bytes on a rune boundary.
func CapReason(s string) string {
	if len(s) <= MaxErrorLen {
		return s
	}
	const tail = "… (cut)"
	cut := MaxErrorLen - len(tail)
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + tail
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// AppHeaders is headers without the x-acemq- namespace. The broker's own
// headers (x-death after a rung) are left for the handler to see.
//
// The map is the handler's own, fresh for each message (a handler may
// write into it). A delivery the runtime published carries x-acemq-*
// headers only: its map is made empty once none is found, without the
// storage of a map sized for the headers it drops (issue 23, the consume
// path).
func AppHeaders(h map[string]any) map[string]any {
	var out map[string]any
	for k, v := range h {
		if strings.HasPrefix(k, InternalPrefix) {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(h))
		}
		out[k] = v
	}
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// Death is what the broker wrote when it dead-lettered a message on its
// own: past a quorum queue's delivery limit (delivery_limit), a TTL
// (expired), a length limit (maxlen) or a nack without requeue from
// outside the library (rejected).
type Death struct {
	Queue  string // the queue it was dead-lettered from
	Reason string // delivery_limit, expired, maxlen or rejected
	Count  int    // how often it died this way from that queue
}

// BrokerDeath reads the broker's latest dead-lettering from a message's
// headers: x-last-death-* (RabbitMQ 4), else the first entry of x-death
// (the most recent, on 3.10 and 4), else x-first-death-*. ok is false when
// the broker never dead-lettered the message. The runtime drops these
// headers on every republish, so what is left is the broker's own word
// since the library last handled the message. Tools that read or replay
// dead letters use it to say why a message without x-acemq-error is there.
func BrokerDeath(headers map[string]any) (d Death, ok bool) {
	return brokerDeathOf(headers[headerXDeath], headers[headerLastDeathQueue], headers[headerLastDeathReason],
		headers[headerFirstDeathQueue], headers[headerFirstDeathReason])
}

// The broker's dead-lettering headers.
const (
	headerXDeath           = wire.HeaderDeath
	headerLastDeathQueue   = wire.HeaderLastDeathQueue
	headerLastDeathReason  = wire.HeaderLastDeathReason
	headerFirstDeathQueue  = wire.HeaderFirstDeathQueue
	headerFirstDeathReason = wire.HeaderFirstDeathReason
)

// brokerDeathOf is BrokerDeath of the headers' values.
func brokerDeathOf(xDeath, lastQueue, lastReason, firstQueue, firstReason any) (d Death, ok bool) {
	if deaths, isList := xDeath.([]any); isList && len(deaths) > 0 {
		if t, isTable := deaths[0].(amqp.Table); isTable {
			d = Death{Queue: HeaderString(t, "queue"), Reason: HeaderString(t, "reason"), Count: int(PositiveInt(t["count"], 1))}
		}
	}
	if d.Reason == "" {
		d.Queue, d.Reason, d.Count = stringValue(lastQueue), stringValue(lastReason), 1
	}
	if d.Reason == "" {
		d.Queue, d.Reason, d.Count = stringValue(firstQueue), stringValue(firstReason), 1
	}
	return d, d.Reason != ""
}

// brokerDeath fills Error and Queue for a message the broker dead-lettered
// on its own (no x-acemq-queue: the library writes one on everything it
// sets aside): "dead-lettered by the broker: delivery_limit", so it reads
// clearly when pulled or replayed. A rung's expiry is the ladder working,
// not a death: it is left alone.
func (e *Envelope) brokerDeath(d Death, ok bool) {
	if !ok || d.Reason == "expired" && (wire.IsRung(d.Queue) || wire.IsDelayLevel(d.Queue)) {
		return
	}
	why := "dead-lettered by the broker: " + d.Reason
	if e.Error != "" {
		why += " (last failure: " + e.Error + ")"
	}
	e.Error, e.Queue = CapReason(why), d.Queue
}
