// Package manifest reads an acemq-gen manifest (acemq.yaml) into a syntax
// tree that keeps the line and column of every node.
//
// Parse checks the YAML against schemas/manifest.schema.json, the same
// schema editors use for completion, and maps each validation error back to
// the line and column of the offending node, with a did-you-mean for
// unknown keys and misspelt enum values. Every problem is reported at once,
// as an Errors value whose lines read
//
//	acemq.yaml:12:5: queue "orders.new": unknown key "retyr" (did you mean "retry"?)
//
// The tree keeps the manifest's order everywhere (policies, messages,
// queues...): the generated code follows it, so it never depends on the
// iteration order of a Go map.
//
// The tree's yaml tags (ast.go) are the Go side's one list of the
// manifest's keys: decode.go reads the tree by them, in one walk of the
// YAML nodes, and a test proves they and the schema's properties agree.
// Meaning (names resolve, policies parse, schema files load) is the model
// package's business.
package manifest
