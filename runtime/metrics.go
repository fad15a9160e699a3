package runtime

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The outcomes of wire.MetricOutcome, in Consumer.Stats order.
type outcome uint8

const (
	outcomeAccepted outcome = iota
	outcomeRetried
	outcomeRejected
	outcomeParked
	outcomeGaveUpAttempts // "gave up after N attempts: …"
	outcomeGaveUpTooOld   // "gave up after N attempts (older than D): …"
	outcomeUndecodable
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"accepted", "retried", "rejected", "parked", "gave_up_attempts", "gave_up_too_old", "undecodable"}

func (o outcome) String() string { return outcomeNames[o] }

// durationBuckets are the boundaries the messaging conventions advise for
// their duration histograms, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

type metrics struct {
	sent, consumed                                        metric.Int64Counter
	processDuration, operationDuration                    metric.Float64Histogram
	outcome, rungMissing, setAsideFailed, registryUnavail metric.Int64Counter
	frameErrors                                           metric.Int64Counter
	replayMoved, browsed, retrySpilled                    metric.Int64Counter
	requestDuration                                       metric.Float64Histogram
	lateReplies, requestsExpired                          metric.Int64Counter
	held, inFlight                                        metric.Int64ObservableGauge
	meter                                                 metric.Meter
	mu                                                    sync.RWMutex
	sets                                                  map[attrKey]attrOpts // measurement options by attributes, built once
	registration                                          metric.Registration
}

func newMetrics(mp metric.MeterProvider) *metrics {
	m := &metrics{meter: mp.Meter("github.com/acemq/acemq-go/runtime"), sets: map[attrKey]attrOpts{}}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil {
			// A provider that cannot make a counter gets no counts, never a crash.
			c, _ = metricNoop.Int64Counter(name)
		}
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		h, err := m.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		if err != nil {
			h, _ = metricNoop.Float64Histogram(name)
		}
		return h
	}
	m.sent = counter(wire.MetricSent, "{message}", "Number of messages producer attempted to send to the broker.")
	m.consumed = counter(wire.MetricConsumed, "{message}", "Number of messages that were delivered to the application.")
	m.processDuration = histogram(wire.MetricProcessDuration, "Duration of processing operation.")
	m.operationDuration = histogram(wire.MetricOperationDuration, "Duration of messaging operation initiated by a producer or consumer client (publish until confirmed).")
	m.outcome = counter(wire.MetricOutcome, "{message}", "Deliveries settled, by outcome (acemq.outcome) and, for retries, where the wait is held (acemq.wait).")
	m.rungMissing = counter(wire.MetricRungMissing, "{message}", "Broker waits held in memory because the rung queue was missing.")
	m.retrySpilled = counter(wire.MetricRetrySpilled, "{message}", "Waits below the broker threshold sent to a rung because the consumer's hold budget was full.")
	m.setAsideFailed = counter(wire.MetricSetAsideFailed, "{message}", "Publishes of a retry, dead letter or park that were returned or refused (each try; the delivery is held and the copy tried again).")
	m.frameErrors = counter(wire.MetricFrameErrors, "{error}", "Times a consumer's connection was closed on a frame the client cannot read; the consumer moved to a connection of its own and backs off.")
	m.registryUnavail = counter(wire.MetricRegistryUnavailable, "{lookup}", "Writer schema lookups that met an unavailable registry; the message was held.")
	m.replayMoved = counter(wire.MetricReplayMoved, "{message}", "Messages Replay moved: copy confirmed, original acked.")
	m.requestDuration = histogram(wire.MetricRequestDuration, "Duration of a request, from its send to its reply or its failure.")
	m.lateReplies = counter(wire.MetricLateReplies, "{message}", "Replies that came for no waiting request (its caller's ctx had ended), dropped.")
	m.requestsExpired = counter(wire.MetricRequestsExpired, "{message}", "Requests settled without running them: their caller's deadline had passed when the responder came to them.")
	m.browsed = counter(wire.MetricBrowsed, "{message}", "Messages Browse read and returned to their queue (a look, not a consumption).")
	var err error
	if m.held, err = m.meter.Int64ObservableGauge(wire.MetricHeld, metric.WithUnit("{message}"),
		metric.WithDescription("Deliveries a consumer holds unsettled with its worker free (retries waiting in memory, copies tried again or waiting for their confirm, registry waits).")); err != nil {
		m.held, _ = metricNoop.Int64ObservableGauge(wire.MetricHeld)
	}
	if m.inFlight, err = m.meter.Int64ObservableGauge(wire.MetricInFlight, metric.WithUnit("{message}"),
		metric.WithDescription("Deliveries a consumer's handlers are working on.")); err != nil {
		m.inFlight, _ = metricNoop.Int64ObservableGauge(wire.MetricInFlight)
	}
	return m
}

// observe reports c's consumers in the two gauges, summed per queue, until
// unobserve.
func (m *metrics) observe(c *Connection) {
	reg, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		type counts struct{ held, inFlight int64 }
		perQueue := map[string]counts{}
		for _, cs := range c.trackedConsumers() {
			n := perQueue[cs.queue]
			st := cs.Stats()
			n.held += int64(st.Held)
			n.inFlight += int64(st.InFlight)
			perQueue[cs.queue] = n
		}
		for q, n := range perQueue {
			attrs := metric.WithAttributes(attrSystem, attribute.String("messaging.destination.name", q))
			o.ObserveInt64(m.held, n.held, attrs)
			o.ObserveInt64(m.inFlight, n.inFlight, attrs)
		}
		return nil
	}, m.held, m.inFlight)
	if err == nil {
		m.registration = reg
	}
}

func (m *metrics) unobserve() {
	if m.registration != nil {
		_ = m.registration.Unregister()
	}
}

var attrSystem = attribute.String("messaging.system", "rabbitmq")

// attrKey names one attribute set of one instrument family.
type attrKey struct {
	kind        uint8 // which attributes: see the kind* constants
	dest, typ   string
	a, b        string
	errorType   string
	outcomeName string
}

const (
	kindPublish uint8 = iota
	kindConsume
	kindOutcome
	kindQueue
	kindProcess
	kindReceive
	kindBrowse
	kindRequest
)

// attrOpts are one attribute set as options for Add and Record, built once:
// passing a prebuilt slice allocates nothing per measurement.
type attrOpts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// opts returns the measurement options of k, building them the first time.
func (m *metrics) opts(k attrKey) attrOpts {
	m.mu.RLock()
	o, ok := m.sets[k]
	m.mu.RUnlock()
	if ok {
		return o
	}
	attrs := []attribute.KeyValue{attrSystem, attribute.String("messaging.destination.name", k.dest)}
	switch k.kind {
	case kindPublish:
		attrs = append(attrs, attribute.String("messaging.operation.name", "publish"), attribute.String("messaging.operation.type", "send"),
			attribute.String("acemq.message.type", k.typ), attribute.String("acemq.publish", k.a))
	case kindConsume, kindProcess:
		attrs = append(attrs, attribute.String("messaging.operation.name", "process"), attribute.String("messaging.operation.type", "process"),
			attribute.String("acemq.message.type", k.typ))
	case kindReceive:
		attrs = append(attrs, attrOpReceive, attrOpTypeReceive)
		if k.typ != "" { // "" on an empty receive: no message, no type
			attrs = append(attrs, attribute.String("acemq.message.type", k.typ))
		}
	case kindBrowse:
		attrs = append(attrs, attribute.String("acemq.message.type", k.typ))
	case kindRequest:
		attrs = append(attrs, attribute.String("acemq.message.type", k.typ), attribute.String("acemq.reply.type", k.a))
	case kindOutcome:
		attrs = append(attrs, attribute.String(wire.AttrOutcome, k.outcomeName), attribute.String("acemq.message.type", k.typ))
		if k.a != "" {
			attrs = append(attrs, attribute.String("acemq.wait", k.a))
		}
	}
	if k.errorType != "" {
		attrs = append(attrs, attribute.String("error.type", k.errorType))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(attrs...))
	o = attrOpts{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
	m.mu.Lock()
	if len(m.sets) < 10000 { // bounded anyway; never a leak
		m.sets[k] = o
	}
	m.mu.Unlock()
	return o
}

// add counts one on c for queue (the acemq counters without a message).
func (m *metrics) add(c metric.Int64Counter, queue string) {
	ctx := context.Background()
	if !c.Enabled(ctx) {
		return
	}
	c.Add(ctx, 1, m.opts(attrKey{kind: kindQueue, dest: queue}).add...)
}

// zeroQueue makes queue's failure counters (rung.missing, set_aside.failed,
// registry.unavailable) and retry.spilled exist at 0 from its consumer's
// start. Prometheus
// sees no increase in a series that first appears at 1 (increase and rate
// need a sample before it), so without the 0 the first missing rung of a
// process would never fire the alert of docs/metrics.md.
func (m *metrics) zeroQueue(queue string) {
	ctx := context.Background()
	for _, c := range []metric.Int64Counter{m.rungMissing, m.setAsideFailed, m.registryUnavail, m.retrySpilled} {
		if c.Enabled(ctx) {
			c.Add(ctx, 0, m.opts(attrKey{kind: kindQueue, dest: queue}).add...)
		}
	}
}

// published records one publish to exchange: sent, and its duration when
// it was confirmed or failed.
func (m *metrics) published(exchange, typ, origin string, took time.Duration, err error) {
	ctx := context.Background()
	sent, timed := m.sent.Enabled(ctx), m.operationDuration.Enabled(ctx)
	if !sent && !timed {
		return
	}
	o := m.opts(attrKey{kind: kindPublish, dest: destination(exchange), typ: knownType(typ), a: publishOrigin(origin), errorType: errorType(err)})
	if sent {
		m.sent.Add(ctx, 1, o.add...)
	}
	if timed {
		m.operationDuration.Record(ctx, took.Seconds(), o.rec...)
	}
}

// requested records one request to exchange: its type, its reply's, how
// long until its reply or failure.
func (m *metrics) requested(exchange, typ, replyType string, took time.Duration, err error) {
	ctx := context.Background()
	if !m.requestDuration.Enabled(ctx) {
		return
	}
	m.requestDuration.Record(ctx, took.Seconds(), m.opts(attrKey{kind: kindRequest, dest: destination(exchange), typ: knownType(typ), a: knownType(replyType), errorType: requestErrorType(err)}).rec...)
}

// requestErrorType is error.type of a request: a responder's answer is
// reply_error, a reply that can no longer come no_reply, else as a
// publish's.
func requestErrorType(err error) string {
	var re *ReplyError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &re):
		return "reply_error"
	case errors.Is(err, ErrNoReply):
		return "no_reply"
	}
	return errorType(err)
}

// consumedOne counts a delivery handed to a consumer of queue.
func (m *metrics) consumedOne(queue, typ string) {
	ctx := context.Background()
	if !m.consumed.Enabled(ctx) {
		return
	}
	m.consumed.Add(ctx, 1, m.opts(attrKey{kind: kindConsume, dest: queue, typ: knownType(typ)}).add...)
}

// processed records how long a delivery took to get its answer; errType
// is "" for Accept.
func (m *metrics) processed(queue, typ string, took time.Duration, errType string) {
	ctx := context.Background()
	if !m.processDuration.Enabled(ctx) {
		return
	}
	m.processDuration.Record(ctx, took.Seconds(), m.opts(attrKey{kind: kindProcess, dest: queue, typ: knownType(typ), errorType: errType}).rec...)
}

// settledAs counts one outcome; wait is where a retry waits.
func (m *metrics) settledAs(queue, typ string, o outcome, wait string) {
	ctx := context.Background()
	if !m.outcome.Enabled(ctx) {
		return
	}
	m.outcome.Add(ctx, 1, m.opts(attrKey{kind: kindOutcome, dest: queue, typ: knownType(typ), outcomeName: o.String(), a: wait}).add...)
}

// publishOrigin is the acemq.publish attribute: application, or why the
// runtime republished (retry, dead_letter, park, replay).
func publishOrigin(origin string) string {
	if origin == "" {
		return "application"
	}
	return origin
}

// destination is the messaging.destination.name of a publish to exchange.
func destination(exchange string) string {
	if exchange == "" {
		return "amq.default"
	}
	return exchange
}

// errorType is the error.type of a failed publish ("" for none): a small
// fixed set, never the error's text.
func errorType(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrBlocked):
		return "blocked"
	case errors.Is(err, ErrUnroutable):
		return "unroutable"
	case errors.Is(err, ErrNacked):
		return "nacked"
	case errors.Is(err, ErrExchangeNotFound):
		return "exchange_not_found"
	case errors.Is(err, ErrQueueNotFound):
		return "queue_not_found"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrUnavailable):
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

func declareType(name string) {
	knownTypes.Lock()
	knownTypes.names[name] = struct{}{}
	knownTypes.Unlock()
}

func knownType(name string) string {
	knownTypes.RLock()
	_, ok := knownTypes.names[name]
	knownTypes.RUnlock()
	if !ok {
		return "unknown"
	}
	return name
}
