// Command acemq-gen turns an acemq manifest (acemq.yaml) into typed Go code:
// message types, retry policies, the topology, typed publishers and typed
// consumers over github.com/acemq/acemq-go/runtime.
//
//	acemq-gen -f acemq.yaml [-o DIR] [-q]    write the generated files; one line
//	                                         says what was written (-q: none)
//	acemq-gen version                        print acemq-gen's module version
//	acemq-gen check -f acemq.yaml [-o DIR]   exit 1 with a diff when they are stale
//	acemq-gen compat -f acemq.yaml --against DIR|git:REF
//	                                         exit 1 when a schema change breaks a reader
//	acemq-gen export -f acemq.yaml --format definitions|asyncapi|mermaid|dot|markdown [-o FILE]
//	                                         the topology as a RabbitMQ definitions file, an
//	                                         AsyncAPI 3.0 document, a diagram or a summary
//
// In a service: //go:generate go tool acemq-gen -f acemq.yaml, after
// go get -tool github.com/acemq/acemq-go/cmd/acemq-gen. See docs/generator.md
// and, for export and the manifest's exports:, docs/artifacts.md.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
