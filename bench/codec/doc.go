// Package codec holds the JSON codec micro-benchmarks on generated code
// (issue 14's K2 and K3 with the generated check): the bench's OrderJSON,
// acemq-gen's output in ../orders, encoded by its message type's codec
// (the generated check, the reference validator only for what it does not
// pass) and by runtime.NewJSONCodec (the reference validator alone, on
// the parsed body), each against bare
// encoding/json in the same run. See docs/performance.md.
package codec
