// Package export is acemq-gen's artifact stage: from a validated model
// (internal/gen/model) it writes the topology in formats other tools read —
// a RabbitMQ definitions file, an AsyncAPI 3.0 document, Mermaid and
// Graphviz DOT diagrams, and a Markdown summary — one file of this package
// per format. The JSON formats are typed structs marshalled with
// encoding/json; the text formats are the templates of the top-level
// templates package, executed on a templates.Data built here (data.go).
//
// Every format is built from the topology Topology(m) returns, the same
// runtime.Topology the generated Topology() function returns, and the
// definitions file from runtime's (*Topology).Declarations: what Declare
// declares, so importing the file and running the service give the same
// broker state. Output is deterministic: the same model gives the same
// bytes. The runtime imports none of this.
package export
