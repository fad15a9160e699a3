// The bench's generated service: acemq-gen's output for acemq.yaml (which
// writes the package doc), so the typed cases run the real generated
// publisher and consumer.

package orders

//go:generate go -C ../.. run ./cmd/acemq-gen -f bench/orders/acemq.yaml
