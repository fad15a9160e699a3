// Package obs owns what an outcome leaves behind besides the message:
// the OpenTelemetry metrics (Metrics, one instrument set per connection,
// with their attribute sets built once), the spans' helpers (the trace
// context carried in the headers, the process span, the tracer kept per
// provider) and the outcome log's limiter (at most so many retry,
// dead-letter and park lines a window, the rest summed up). The names of
// the metrics are runtime/wire's.
package obs
