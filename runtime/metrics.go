package runtime

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Names of the counters the runtime records through OpenTelemetry. Each
// carries an acemq.queue attribute.
const (
	MetricHandled        = "acemq.messages.handled"   // attribute acemq.outcome: accept, retry, reject, park, decode
	MetricRetried        = "acemq.retry.scheduled"    // attribute acemq.wait: memory or broker
	MetricRungMissing    = "acemq.retry.rung.missing" // a rung was missing: the wait was held in memory
	MetricDeadLettered   = "acemq.dead_lettered"
	MetricParked         = "acemq.parked"
	MetricSetAsideFailed = "acemq.set_aside.failed" // a retry, dead letter or park could not be published
	// MetricRegistryUnavailable counts lookups of a writer schema that met
	// a registry that did not answer; the message was held, not parked.
	MetricRegistryUnavailable = "acemq.registry.unavailable"
)

type metrics struct {
	handled, retried, rungMissing, deadLettered, parked, setAsideFailed metric.Int64Counter
	registryUnavailable                                                 metric.Int64Counter
}

func newMetrics(mp metric.MeterProvider) *metrics {
	m := mp.Meter("github.com/acemq/acemq-go/runtime")
	counter := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc))
		if err != nil {
			// A provider that cannot make a counter gets no counts, never a crash.
			c, _ = metricNoop.Int64Counter(name)
		}
		return c
	}
	return &metrics{
		handled:        counter(MetricHandled, "messages a handler or the codec settled, by outcome"),
		retried:        counter(MetricRetried, "retries scheduled, by where the wait is held"),
		rungMissing:    counter(MetricRungMissing, "broker waits held in memory because the rung queue was missing"),
		deadLettered:   counter(MetricDeadLettered, "messages published to q.dlq"),
		parked:         counter(MetricParked, "messages published to q.parked"),
		setAsideFailed: counter(MetricSetAsideFailed, "publishes of a retry, dead letter or park that were returned or refused (each try; the delivery is held and the copy tried again)"),
		registryUnavailable: counter(MetricRegistryUnavailable,
			"writer schema lookups that met an unavailable registry; the message was held"),
	}
}

func (m *metrics) add(c metric.Int64Counter, queue string, attrs ...attribute.KeyValue) {
	attrs = append(attrs, attribute.String("acemq.queue", queue))
	c.Add(context.Background(), 1, metric.WithAttributes(attrs...))
}
