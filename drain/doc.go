// Package drain says whether a queue drains, through RabbitMQ's management
// HTTP API (with the RabbitMQ team's rabbit-hole client): its depth, its
// consumers, its publish, deliver and ack rates, the age of its oldest
// message where the broker gives it, and a verdict.
//
// Depth alone is not an alert: a busy queue is deep and healthy. Alert on
// depth that is not draining — messages waiting and no consumer, or acks
// slower than publishes for a while — or on the age of the oldest message
// (docs/metrics.md, "Queue drain").
//
// It lives apart from package runtime so that a service that only
// consumes does not link an HTTP client for the management API.
package drain
