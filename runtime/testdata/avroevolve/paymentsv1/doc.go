// Package paymentsv1 is generated from acemq.yaml: version 1 of the payments
// message, for the runtime's cross-process Avro evolution test.
package paymentsv1

//go:generate go run github.com/acemq/acemq-go/cmd/acemq-gen -f acemq.yaml
