// Package alertcheck holds the tests that run the PromQL of
// docs/metrics.md for real: each ```promql block of the page is read from
// the page itself (so the docs cannot drift from what is tested), put in a
// rules file as an alert, and evaluated by promtool test rules —
// Prometheus's own rule engine — over series recorded from the real
// exporters while the real broker makes the failures happen: the runtime's
// instruments through OpenTelemetry's Prometheus exporter (a missing rung,
// a dead letter with nowhere to go).
//
// promtool comes from Debian's prometheus package, unpacked into
// .tools/bin by scripts/promtool.sh (make tools); without it the tests
// skip, or fail under CI=true.
package alertcheck
