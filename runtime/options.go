package runtime

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/consume"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// DialOption configures a Connection.
type DialOption interface{ applyDial(*dialConfig) }

type dialOptionFunc func(*dialConfig)

func (f dialOptionFunc) applyDial(c *dialConfig) { f(c) }

type dialConfig struct {
	origin         string
	retry          *RetryPolicy
	logger         *slog.Logger
	tls            *tls.Config
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	registry       SchemaRegistry
	reconnectMin   time.Duration
	reconnectMax   time.Duration
	addresses      []string
	heartbeat      time.Duration
	// referenceValidation: JSON types validate with the reference
	// validator only (WithReferenceValidation).
	referenceValidation bool
	middleware          []Middleware // WithMiddleware's, in order
	// noHeaderFilter leaves headerFilter out (a test hook: the frame
	// errors it prevents are how the fallback is tested).
	noHeaderFilter bool
}

// WithOrigin sets x-acemq-origin on what the connection publishes
// (default "<program>@<host>").
func WithOrigin(origin string) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.origin = origin })
}

// DialConsumeOption is an option for Dial, where it is the default of the
// connection's consumers, and for Consume, where it is one consumer's:
// WithRetry and WithMiddleware.
type DialConsumeOption interface {
	DialOption
	ConsumeOption
}

type retryOption struct{ policy RetryPolicy }

func (o retryOption) applyDial(c *dialConfig)        { p := o.policy; c.retry = &p }
func (o retryOption) applyConsume(c *consume.Config) { p := o.policy; c.Retry = &p }

// WithRetry sets the retry policy. On Dial it is the connection's default;
// on a consumer it wins over the manifest's and the connection's. The
// policy used is the consumer option's, else the manifest's, else the
// connection's, else NoRetry().
func WithRetry(p RetryPolicy) DialConsumeOption { return retryOption{policy: p} }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.logger = l })
}

// WithTLS sets the TLS configuration for amqps:// URLs. Each attempt dials
// with a clone of cfg, so cfg is never changed and, with several addresses,
// each node's certificate is verified against that node's host; a
// ServerName set in cfg is used for every node.
func WithTLS(cfg *tls.Config) DialOption { return dialOptionFunc(func(c *dialConfig) { c.tls = cfg }) }

// WithMeterProvider sets where the runtime's metrics go (default the
// global OpenTelemetry provider, a no-op until one is installed); the
// instruments are listed in docs/metrics.md.
func WithMeterProvider(mp metric.MeterProvider) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.meterProvider = mp })
}

// WithTracerProvider sets the OpenTelemetry tracer provider (default the
// global provider). Every publish is a producer span, a child of ctx's,
// whose W3C context is written into the traceparent and tracestate
// headers; each delivery's process span is its child, and the runtime's
// own republishes are children of the process span (docs/metrics.md).
func WithTracerProvider(tp trace.TracerProvider) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.tracerProvider = tp })
}

// SchemaRegistryOption sets a schema registry; it is both a DialOption
// (the connection's registry) and a TypeOption (an Avro type's own, the
// manifest's registry: in generated code). Made by WithSchemaRegistry.
type SchemaRegistryOption interface {
	DialOption
	TypeOption
}

type registryOption struct{ registry SchemaRegistry }

func (o registryOption) applyDial(c *dialConfig) { c.registry = o.registry }
func (o registryOption) applyType(c *typeConfig) { c.registry = o.registry }

// WithSchemaRegistry sets the registry Avro types register and look up
// writer schemas in. On Dial it is the connection's and wins over a type's
// own; on NewAvroType it is the type's, used on connections dialled
// without one. Without either, the process's default registry.Fingerprint,
// whose ids are derived from the schemas and so agree between processes.
func WithSchemaRegistry(r SchemaRegistry) SchemaRegistryOption { return registryOption{registry: r} }

// WithReferenceValidation makes every JSON message type of the connection
// validate with the reference validator (santhosh-tekuri/jsonschema) alone,
// on publish as on consume, skipping the checks acemq-gen generates. The
// verdicts and error texts are the same either way (the generated checks
// are tested against the reference on the corpus); this is for anyone who
// wants the reference and only the reference, at its cost.
func WithReferenceValidation() DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.referenceValidation = true })
}

// WithAddresses adds broker URLs (the other nodes of a cluster), tried in
// turn after Dial's own URL (which may be empty when every address is
// given here). Dial's URL may also be a comma-separated list; both can be
// used together.
func WithAddresses(urls ...string) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.addresses = append(c.addresses, urls...) })
}

// WithReconnectBackoff sets the bounds of the backoff between reconnection
// attempts, on the first Dial and when consumers resubscribe (default
// 100ms doubling to 2s). A consumer's waits are jittered down to between
// half and all of each, so that a fleet does not reconnect in step, and a
// consumer tries at once when any other call of the connection has
// reconnected.
func WithReconnectBackoff(min, max time.Duration) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.reconnectMin, c.reconnectMax = min, max })
}

// WithHeartbeat sets the AMQP heartbeat the connection asks for (default
// 10s; whole seconds, at least 1s; 0 switches heartbeats off, which
// RabbitMQ advises against). A connection that stalls silently (a network
// that drops packets without a reset) is closed by amqp091-go once nothing
// has come from the broker for 1.5 heartbeats (it expects a frame every
// half heartbeat and gives up after three missed), and the runtime
// reconnects.
func WithHeartbeat(d time.Duration) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.heartbeat = d })
}

// ConsumeOption configures a Consumer.
type ConsumeOption interface{ applyConsume(*consume.Config) }

type consumeOptionFunc func(*consume.Config)

func (f consumeOptionFunc) applyConsume(c *consume.Config) { f(c) }

// WithBodyInLogs adds the body, cut at maxBytes, to the consumer's outcome
// log lines (retry, dead letter, park, panic): for debugging only, since a
// body may hold what a log must not. Text is logged as is, anything else in
// base64. Without it the body is never logged.
func WithBodyInLogs(maxBytes int) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.BodyInLogs = maxBytes })
}

// WithPrefetch sets how many unsettled deliveries the broker sends ahead
// for the handlers (default 20). Retries held in memory do not take these
// slots: they take the hold budget's (WithHoldBudget), which the
// channel's basic.qos adds to the prefetch.
func WithPrefetch(n int) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.Prefetch = n })
}

// WithHoldBudget sets how many retries the consumer holds in memory at
// once on top of its prefetch (default: as many as the prefetch, at most
// 16, for each held retry makes the broker's single acks dearer; 0 under
// WithRedeliveryLimit, whose count every message sent ahead shares). The
// channel's basic.qos is prefetch + budget, so held retries never starve
// the handlers. Once the budget is full a further wait below the policy's
// wait_in_broker_from spills to the broker: its copy goes to the rung for
// that wait rounded up to whole seconds (wire.SpillRungs, declared
// by the topology), confirmed, then the delivery is acked (the worker does
// not wait for the confirm). 0 holds none:
// every such wait goes to a rung. Under WithWaitInBrokerFrom(0) nothing
// spills: past the budget a retry is held in one of the handlers' slots.
func WithHoldBudget(n int) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.HoldBudget, c.HoldBudgetSet = n, true })
}

// WithAckSlack gives the deliveries settled behind a copy waiting for its
// confirm (a retry to a rung, a spill, a dead letter, a park) n window
// slots of their own (default: as many as the prefetch, at most 64; 0
// under WithRedeliveryLimit): the channel's basic.qos is prefetch + hold
// budget + n, and up to n such deliveries wait, at most 500 ms, for the
// copy's confirm, so that one multiple ack covers them all with the
// original instead of an ack each (the original is still acked only once
// its copy is confirmed). With a slack, a retry is held in a budget slot
// only while the deliveries the consumer takes during its wait fit in the
// slack, judged by what it took over the last span as long as the wait
// (n deliveries or more within it: the wait spills to its rung as past a
// full budget; a handful of messages in flight never spills). The cost
// of the slack: the broker sends up to n more deliveries ahead (n more
// bodies in the process's memory, n more messages taken from competing
// consumers of the queue), and what a crash of the process redelivers
// grows by up to n settled deliveries. WithAckSlack(0) turns it off: the
// qos is prefetch + hold budget, and retries are held in memory up to the
// budget whatever the rate.
func WithAckSlack(n int) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.AckSlack, c.AckSlackSet = n, true })
}

// WithConcurrency sets how many handlers run at once (default 1). With
// one, the consumer decodes (and validates) the next deliveries of its
// prefetch, up to 16 and in order, while the handler runs; with several,
// each handler's worker decodes its own delivery.
func WithConcurrency(n int) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.Concurrency = n })
}

// WithoutDeclare stops the consumer declaring q.dlq and q.parked before it
// subscribes: for a one-off reader of q.dlq, which has no business creating
// q.dlq.dlq.
func WithoutDeclare() ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.NoDeclare = true })
}

// WithRequeueOnFailure rejects a failed delivery (Retry) back to its queue
// (basic.reject with requeue: "processing failed", which every RabbitMQ's
// quorum queue counts, 4.3 included) instead of climbing the retry ladder,
// while the policy has attempts left; after the last one it is
// dead-lettered as usual ("gave up after N attempts: …", x-acemq-queue), so
// under NoRetry (one attempt) at once. A requeue cannot rewrite
// x-acemq-attempt, so the attempt (as Envelope.Attempt shows it) is
// x-acemq-attempt plus the broker's x-delivery-count on a quorum queue this
// Connection declared (Declare) or that the ConsumerSpec says is quorum
// (Quorum; generated from the manifest's type: quorum): shared by every
// consumer, kept across restarts; or plus this consumer's own count of its requeues on any other
// queue (a classic queue's x-delivery-count is whatever the producer wrote:
// each consumer of a fleet counts its own, and a restart forgets). On a quorum queue keep
// the delivery limit at or above the attempts (the generator checks it),
// or the broker dead-letters first, without the runtime's reason. Against a
// downstream that is down this is a hot loop, bounded by the attempts: use
// it only for failures that are local and brief.
func WithRequeueOnFailure() ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.RequeueOnFailure = true })
}

// WithRedeliveryLimit parks a message that came back unsettled more than
// n times — a poison message that kills the process handling it, or cuts
// its connection, every time — with "could not be handled: redelivered N
// times without being settled (…)", instead of letting the broker
// redeliver it for ever (a classic queue has no limit of its own). The
// count is the broker's x-delivery-count on a quorum queue this Connection
// declared (Declare; a closed channel or connection counts there on every
// RabbitMQ, 4.3 included); on any other queue (a classic queue's
// x-delivery-count is whatever the producer wrote) the runtime keeps it in
// x-acemq-redeliveries: a redelivered message
// is replaced by a copy carrying the count (published with a confirm, then
// the original acked) before any handler sees it, so the copy goes to the
// back of the queue and reaches the handler with Redelivered false. Off
// (0) by default. Every message the broker has sent ahead (the basic.qos
// window) comes back with the one that killed the process, so each counts
// that crash: with it the default hold budget and ack slack are 0, keeping
// the window at the prefetch (WithPrefetch(1) isolates a poison message);
// set WithHoldBudget or WithAckSlack to have both.
func WithRedeliveryLimit(n int) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.RedeliveryLimit = n })
}

// WithMaxBodySize sets the largest body the consumer decodes (default
// DefaultMaxBodySize, 1 MiB). A larger body is parked unread, with
// "could not be decoded: acemq: body too large: …"; the Avro decoder's
// limits on one string, bytes or array value are set to the same size, so
// no forged length inside an accepted body allocates more than it.
func WithMaxBodySize(n int) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.MaxBody = n })
}

// PublishOption configures one publish.
type PublishOption interface{ applyPublish(*publishConfig) }

type publishOptionFunc func(*publishConfig)

func (f publishOptionFunc) applyPublish(c *publishConfig) { f(c) }

// routingKeyOption and correlationIDOption are WithRoutingKey's and
// WithCorrelationID's: plain values, so that one given a constant (as the
// generated publishers give their routing keys) is not allocated, and
// publishConfigOf sets them without a call through the interface.
type (
	routingKeyOption    string
	correlationIDOption string
	messageIDOption     string
)

func (k routingKeyOption) applyPublish(c *publishConfig)     { c.routingKey = string(k) }
func (id correlationIDOption) applyPublish(c *publishConfig) { c.correlationID = string(id) }
func (id messageIDOption) applyPublish(c *publishConfig) {
	c.messageID, c.messageIDSet = string(id), true
}

// publishConfigOf applies opts in order. The configuration stays on the
// caller's stack unless an option other than a routing key or a
// correlation id is given (applyPublishOption).
func publishConfigOf(opts []PublishOption) publishConfig {
	var cfg publishConfig
	for _, o := range opts {
		switch o := o.(type) {
		case routingKeyOption:
			cfg.routingKey = string(o)
		case correlationIDOption:
			cfg.correlationID = string(o)
		case messageIDOption:
			cfg.messageID, cfg.messageIDSet = string(o), true
		default:
			cfg = applyPublishOption(o, cfg)
		}
	}
	return cfg
}

// applyPublishOption is cfg with o applied, through a copy the call
// through the interface may keep.
func applyPublishOption(o PublishOption, cfg publishConfig) publishConfig {
	c := cfg
	o.applyPublish(&c)
	return c
}

type publishConfig struct {
	routingKey    string
	headers       map[string]any
	correlationID string
	noMandatory   bool
	// orderingKey is WithOrderingKey's (set when given).
	orderingKey    string
	orderingKeySet bool
	// messageID is WithMessageID's (set when given).
	messageID    string
	messageIDSet bool
	delay        time.Duration // WithDelay's (set when given)
	delaySet     bool
}

// WithRoutingKey sets the routing key.
func WithRoutingKey(key string) PublishOption {
	return routingKeyOption(key)
}

// WithHeaders adds application headers (merged; later calls win). The
// x-acemq- headers are the runtime's to write; x-acemq-id among h is
// refused (an error matching ErrInvalidMessage, nothing sent) rather than
// replaced: a message's identity is WithMessageID's.
func WithHeaders(h map[string]any) PublishOption {
	return publishOptionFunc(func(c *publishConfig) {
		if c.headers == nil {
			c.headers = map[string]any{}
		}
		for k, v := range h {
			c.headers[k] = v
		}
	})
}

// WithCorrelationID sets the correlation_id property.
func WithCorrelationID(id string) PublishOption {
	return correlationIDOption(id)
}

// WithMessageID sets the message's identity, its x-acemq-id and AMQP
// message_id, instead of a fresh UUIDv7: the key a consumer's inbox
// (pgstore) or dedup (redisstore) absorbs a duplicate by. Give a
// re-publish the id of the publish it repeats — after a publish whose
// confirm never came (a timeout, a lost connection), or a retry of the
// code that publishes — and the consumer handles the message once; an id
// made from a business key (an order id and what happened to it) does
// the same for a producer that restarts. The id must be 1 to 255 bytes
// (message_id is an AMQP short string), and names one message: a
// PublishBatch of several refuses it. Either is an error matching
// ErrInvalidMessage, nothing sent. Retries, dead letters and replays keep
// the id, as they keep any.
func WithMessageID(id string) PublishOption {
	return messageIDOption(id)
}

// WithOrderingKey sets the ordering key of a message written to a
// transactional outbox (pgstore.PublishTx): the outbox's relay publishes
// the messages of one key in the order their transactions committed. The
// default key is the correlation id (WithCorrelationID); a message with
// neither has none and no order is promised for it. A message published
// at once (Publish, PublishAsync) has no use for it: it goes in the order
// of the calls, and the key is not sent.
func WithOrderingKey(key string) PublishOption {
	return publishOptionFunc(func(c *publishConfig) { c.orderingKey, c.orderingKeySet = key, true })
}

// WithoutMandatory publishes without the mandatory flag, so a message no
// queue is bound for is dropped silently instead of failing with
// ErrUnroutable: for fan-out events that may have no subscriber yet.
func WithoutMandatory() PublishOption {
	return publishOptionFunc(func(c *publishConfig) { c.noMandatory = true })
}
