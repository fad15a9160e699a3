// Package templates holds, embedded with //go:embed, the text/template
// files of acemq-gen export's text formats — the Mermaid and Graphviz DOT
// diagrams (topology.mmd.tmpl, topology.dot.tmpl) and the Markdown
// topology summary (topology.md.tmpl) — and the data they are executed
// with (Data). The generator's export stage (internal/gen/export) builds a
// Data from the validated model; this package knows nothing of the
// manifest.
//
// Only what is text is a template. The JSON formats — the RabbitMQ
// definitions file and the AsyncAPI 3.0 document — are typed Go structs
// marshalled with encoding/json, not templates (the design card listed them
// here; this is the deviation, with its reason): a JSON template must
// escape every name itself, place every comma, and keep keys in order by
// hand, and one manifest name with a quote or a line break in it makes an
// invalid or, worse, a different document. encoding/json escapes every
// string, sorts map keys, and a struct fixes the field order, so the same
// model always gives the same bytes.
//
// The templates escape what they print with the functions of Funcs: dot
// and mermaid quote a label for their language, md a Markdown table cell
// or inline text, so a name can never end a label, a string or a table
// cell early. Labels are built by the export stage; templates decide the
// drawing (shapes, colours, dashes) by each node's and edge's Kind.
package templates
