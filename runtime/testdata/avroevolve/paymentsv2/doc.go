// Package paymentsv2 is generated from acemq.yaml: version 2 of the payments
// message, for the runtime's cross-process Avro evolution test.
package paymentsv2

//go:generate go run github.com/acemq/acemq-go/cmd/acemq-gen -f acemq.yaml
