// Package bodies shows message bodies to an operator: Avro bodies (the
// Confluent wire format) decoded with the manifest's schemas or its
// registry and written as JSON. acemq dlq peek and acemq ui use it.
package bodies
