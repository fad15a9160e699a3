package obs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The outcomes of wire.MetricOutcome, in Consumer.Stats order.
type Outcome uint8

const (
	OutcomeAccepted Outcome = iota
	OutcomeRetried
	OutcomeRejected
	OutcomeParked
	OutcomeGaveUpAttempts // "gave up after N attempts: …"
	OutcomeGaveUpTooOld   // "gave up after N attempts (older than D): …"
	OutcomeUndecodable
	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{"accepted", "retried", "rejected", "parked", "gave_up_attempts", "gave_up_too_old", "undecodable"}

func (o Outcome) String() string { return outcomeNames[o] }

// durationBuckets are the boundaries the messaging conventions advise for
// their duration histograms, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

type Metrics struct {
	sent, Consumed                                        metric.Int64Counter
	ProcessDuration, operationDuration                    metric.Float64Histogram
	Outcome, RungMissing, SetAsideFailed, RegistryUnavail metric.Int64Counter
	FrameErrors                                           metric.Int64Counter
	ReplayMoved, browsed, RetrySpilled                    metric.Int64Counter
	requestDuration                                       metric.Float64Histogram
	LateReplies, RequestsExpired                          metric.Int64Counter
	held, inFlight                                        metric.Int64ObservableGauge
	meter                                                 metric.Meter
	mu                                                    sync.RWMutex
	sets                                                  map[AttrKey]AttrOpts // measurement options by attributes, built once
	registration                                          metric.Registration
}

func NewMetrics(mp metric.MeterProvider) *Metrics {
	m := &Metrics{meter: mp.Meter("github.com/acemq/acemq-go/runtime"), sets: map[AttrKey]AttrOpts{}}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil {
			// A provider that cannot make a counter gets no counts, never a crash.
			c, _ = MetricNoop.Int64Counter(name)
		}
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		h, err := m.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		if err != nil {
			h, _ = MetricNoop.Float64Histogram(name)
		}
		return h
	}
	m.sent = counter(wire.MetricSent, "{message}", "Number of messages producer attempted to send to the broker.")
	m.Consumed = counter(wire.MetricConsumed, "{message}", "Number of messages that were delivered to the application.")
	m.ProcessDuration = histogram(wire.MetricProcessDuration, "Duration of processing operation.")
	m.operationDuration = histogram(wire.MetricOperationDuration, "Duration of messaging operation initiated by a producer or consumer client (publish until confirmed).")
	m.Outcome = counter(wire.MetricOutcome, "{message}", "Deliveries settled, by outcome (acemq.outcome) and, for retries, where the wait is held (acemq.wait).")
	m.RungMissing = counter(wire.MetricRungMissing, "{message}", "Broker waits held in memory because the rung queue was missing.")
	m.RetrySpilled = counter(wire.MetricRetrySpilled, "{message}", "Waits below the broker threshold sent to a rung because the consumer's hold budget was full.")
	m.SetAsideFailed = counter(wire.MetricSetAsideFailed, "{message}", "Publishes of a retry, dead letter or park that were returned or refused (each try; the delivery is held and the copy tried again).")
	m.FrameErrors = counter(wire.MetricFrameErrors, "{error}", "Times a consumer's connection was closed on a frame the client cannot read; the consumer moved to a connection of its own and backs off.")
	m.RegistryUnavail = counter(wire.MetricRegistryUnavailable, "{lookup}", "Writer schema lookups that met an unavailable registry; the message was held.")
	m.ReplayMoved = counter(wire.MetricReplayMoved, "{message}", "Messages Replay moved: copy confirmed, original acked.")
	m.requestDuration = histogram(wire.MetricRequestDuration, "Duration of a request, from its send to its reply or its failure.")
	m.LateReplies = counter(wire.MetricLateReplies, "{message}", "Replies that came for no waiting request (its caller's ctx had ended), dropped.")
	m.RequestsExpired = counter(wire.MetricRequestsExpired, "{message}", "Requests settled without running them: their caller's deadline had passed when the responder came to them.")
	m.browsed = counter(wire.MetricBrowsed, "{message}", "Messages Browse read and returned to their queue (a look, not a consumption).")
	var err error
	if m.held, err = m.meter.Int64ObservableGauge(wire.MetricHeld, metric.WithUnit("{message}"),
		metric.WithDescription("Deliveries a consumer holds unsettled with its worker free (retries waiting in memory, copies tried again or waiting for their confirm, registry waits).")); err != nil {
		m.held, _ = MetricNoop.Int64ObservableGauge(wire.MetricHeld)
	}
	if m.inFlight, err = m.meter.Int64ObservableGauge(wire.MetricInFlight, metric.WithUnit("{message}"),
		metric.WithDescription("Deliveries a consumer's handlers are working on.")); err != nil {
		m.inFlight, _ = MetricNoop.Int64ObservableGauge(wire.MetricInFlight)
	}
	return m
}

// Observe reports the consumers each gives (a queue, how many deliveries
// it holds for a retry, how many its handlers have) in the two gauges,
// summed per queue, until Unobserve.
func (m *Metrics) Observe(each func(fn func(queue string, held, inFlight int))) {
	reg, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		type counts struct{ held, inFlight int64 }
		perQueue := map[string]counts{}
		each(func(queue string, held, inFlight int) {
			n := perQueue[queue]
			n.held += int64(held)
			n.inFlight += int64(inFlight)
			perQueue[queue] = n
		})
		for q, n := range perQueue {
			attrs := metric.WithAttributes(AttrSystem, attribute.String("messaging.destination.name", q))
			o.ObserveInt64(m.held, n.held, attrs)
			o.ObserveInt64(m.inFlight, n.inFlight, attrs)
		}
		return nil
	}, m.held, m.inFlight)
	if err == nil {
		m.registration = reg
	}
}

func (m *Metrics) Unobserve() {
	if m.registration != nil {
		_ = m.registration.Unregister()
	}
}

var AttrSystem = attribute.String("messaging.system", "rabbitmq")

// AttrKey names one attribute set of one instrument family.
type AttrKey struct {
	Kind        uint8 // which attributes: see the kind* constants
	Dest, Typ   string
	A, B        string
	ErrorType   string
	OutcomeName string
}

const (
	kindPublish uint8 = iota
	KindConsume
	KindOutcome
	kindQueue
	KindProcess
	kindReceive
	kindBrowse
	kindRequest
)

// AttrOpts are one attribute set as options for Add and Record, built once:
// passing a prebuilt slice allocates nothing per measurement.
type AttrOpts struct {
	Add []metric.AddOption
	Rec []metric.RecordOption
}

// Opts returns the measurement options of k, building them the first time.
func (m *Metrics) Opts(k AttrKey) AttrOpts {
	m.mu.RLock()
	o, ok := m.sets[k]
	m.mu.RUnlock()
	if ok {
		return o
	}
	attrs := []attribute.KeyValue{AttrSystem, attribute.String("messaging.destination.name", k.Dest)}
	switch k.Kind {
	case kindPublish:
		attrs = append(attrs, attribute.String("messaging.operation.name", "publish"), attribute.String("messaging.operation.type", "send"),
			attribute.String("acemq.message.type", k.Typ), attribute.String("acemq.publish", k.A))
	case KindConsume, KindProcess:
		attrs = append(attrs, attribute.String("messaging.operation.name", "process"), attribute.String("messaging.operation.type", "process"),
			attribute.String("acemq.message.type", k.Typ))
	case kindReceive:
		attrs = append(attrs, AttrOpReceive, AttrOpTypeReceive)
		if k.Typ != "" { // "" on an empty receive: no message, no type
			attrs = append(attrs, attribute.String("acemq.message.type", k.Typ))
		}
	case kindBrowse:
		attrs = append(attrs, attribute.String("acemq.message.type", k.Typ))
	case kindRequest:
		attrs = append(attrs, attribute.String("acemq.message.type", k.Typ), attribute.String("acemq.reply.type", k.A))
	case KindOutcome:
		attrs = append(attrs, attribute.String(wire.AttrOutcome, k.OutcomeName), attribute.String("acemq.message.type", k.Typ))
		if k.A != "" {
			attrs = append(attrs, attribute.String("acemq.wait", k.A))
		}
	}
	if k.ErrorType != "" {
		attrs = append(attrs, attribute.String("error.type", k.ErrorType))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(attrs...))
	o = AttrOpts{Add: []metric.AddOption{opt}, Rec: []metric.RecordOption{opt}}
	m.mu.Lock()
	if len(m.sets) < 10000 { // bounded anyway; never a leak
		m.sets[k] = o
	}
	m.mu.Unlock()
	return o
}

// Add counts one on c for queue (the acemq counters without a message).
func (m *Metrics) Add(c metric.Int64Counter, queue string) {
	ctx := context.Background()
	if !c.Enabled(ctx) {
		return
	}
	c.Add(ctx, 1, m.Opts(AttrKey{Kind: kindQueue, Dest: queue}).Add...)
}

// ZeroQueue makes queue's failure counters (rung.missing, set_aside.failed,
// registry.unavailable) and retry.spilled exist at 0 from its consumer's
// start. Prometheus
// sees no increase in a series that first appears at 1 (increase and rate
// need a sample before it), so without the 0 the first missing rung of a
// process would never fire the alert of docs/metrics.md.
func (m *Metrics) ZeroQueue(queue string) {
	ctx := context.Background()
	for _, c := range []metric.Int64Counter{m.RungMissing, m.SetAsideFailed, m.RegistryUnavail, m.RetrySpilled} {
		if c.Enabled(ctx) {
			c.Add(ctx, 0, m.Opts(AttrKey{Kind: kindQueue, Dest: queue}).Add...)
		}
	}
}

// Published records one publish to exchange: sent, and its duration when
// it was confirmed or failed.
func (m *Metrics) Published(exchange, typ, origin string, took time.Duration, err error) {
	ctx := context.Background()
	sent, timed := m.sent.Enabled(ctx), m.operationDuration.Enabled(ctx)
	if !sent && !timed {
		return
	}
	o := m.Opts(AttrKey{Kind: kindPublish, Dest: Destination(exchange), Typ: KnownType(typ), A: PublishOrigin(origin), ErrorType: ErrorType(err)})
	if sent {
		m.sent.Add(ctx, 1, o.Add...)
	}
	if timed {
		m.operationDuration.Record(ctx, took.Seconds(), o.Rec...)
	}
}

// Requested records one request to exchange: its type, its reply's, how
// long until its reply or failure.
func (m *Metrics) Requested(exchange, typ, replyType string, took time.Duration, err error) {
	ctx := context.Background()
	if !m.requestDuration.Enabled(ctx) {
		return
	}
	m.requestDuration.Record(ctx, took.Seconds(), m.Opts(AttrKey{Kind: kindRequest, Dest: Destination(exchange), Typ: KnownType(typ), A: KnownType(replyType), ErrorType: RequestErrorType(err)}).Rec...)
}

// RequestErrorType is error.type of a request: a responder's answer is
// reply_error, a reply that can no longer come no_reply, else as a
// publish's.
func RequestErrorType(err error) string {
	var re *core.ReplyError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &re):
		return "reply_error"
	case errors.Is(err, core.ErrNoReply):
		return "no_reply"
	}
	return ErrorType(err)
}

// ConsumedOne counts a delivery handed to a consumer of queue.
func (m *Metrics) ConsumedOne(queue, typ string) {
	ctx := context.Background()
	if !m.Consumed.Enabled(ctx) {
		return
	}
	m.Consumed.Add(ctx, 1, m.Opts(AttrKey{Kind: KindConsume, Dest: queue, Typ: KnownType(typ)}).Add...)
}

// Processed records how long a delivery took to get its answer; errType
// is "" for Accept.
func (m *Metrics) Processed(queue, typ string, took time.Duration, errType string) {
	ctx := context.Background()
	if !m.ProcessDuration.Enabled(ctx) {
		return
	}
	m.ProcessDuration.Record(ctx, took.Seconds(), m.Opts(AttrKey{Kind: KindProcess, Dest: queue, Typ: KnownType(typ), ErrorType: errType}).Rec...)
}

// SettledAs counts one outcome; wait is where a retry waits.
func (m *Metrics) SettledAs(queue, typ string, o Outcome, wait string) {
	ctx := context.Background()
	if !m.Outcome.Enabled(ctx) {
		return
	}
	m.Outcome.Add(ctx, 1, m.Opts(AttrKey{Kind: KindOutcome, Dest: queue, Typ: KnownType(typ), OutcomeName: o.String(), A: wait}).Add...)
}

// PublishOrigin is the acemq.publish attribute: application, or why the
// runtime republished (retry, dead_letter, park, replay).
func PublishOrigin(origin string) string {
	if origin == "" {
		return "application"
	}
	return origin
}

// Destination is the messaging.destination.name of a publish to exchange.
func Destination(exchange string) string {
	if exchange == "" {
		return "amq.default"
	}
	return exchange
}

// ErrorType is the error.type of a failed publish ("" for none): a small
// fixed set, never the error's text.
func ErrorType(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, core.ErrBlocked):
		return "blocked"
	case errors.Is(err, core.ErrUnroutable):
		return "unroutable"
	case errors.Is(err, core.ErrNacked):
		return "nacked"
	case errors.Is(err, core.ErrExchangeNotFound):
		return "exchange_not_found"
	case errors.Is(err, core.ErrQueueNotFound):
		return "queue_not_found"
	case errors.Is(err, core.ErrClosed):
		return "closed"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, core.ErrUnavailable):
		return "unavailable"
	}
	return "_OTHER"
}

// knownTypes are the names of the MessageTypes this process declared: the
// only values acemq.message.type takes besides "unknown".
var knownTypes = struct {
	sync.RWMutex
	names map[string]struct{}
}{names: map[string]struct{}{}}

func DeclareType(name string) {
	knownTypes.Lock()
	knownTypes.names[name] = struct{}{}
	knownTypes.Unlock()
}

func KnownType(name string) string {
	knownTypes.RLock()
	_, ok := knownTypes.names[name]
	knownTypes.RUnlock()
	if !ok {
		return "unknown"
	}
	return name
}
