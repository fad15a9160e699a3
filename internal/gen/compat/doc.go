// Package compat is acemq-gen compat: it compares every message schema of a
// manifest with its previous version and lists what would break a reader.
//
// Two directions are checked, because in a queue both happen at once:
//
//   - backward: new readers read old messages (old messages wait in
//     dead-letter queues and retry rungs, and are replayed to consumers
//     built from the new schema);
//   - forward: old readers read new messages (producers deploy ahead of
//     consumers).
//
// A message's compat mode (manifest compat:, default full) says which:
// full is both, backward or forward one, none neither.
//
// Avro schemas are judged by hamba/avro's SchemaCompatibility (Avro's
// schema resolution rules); this package then walks the two schemas to say
// where and why. JSON Schema has no resolution rules, so this package has
// its own checker: each case that makes a reader reject a message the
// writer's schema allows is a named rule (type-narrowed, enum-value-added,
// additional-properties-closed, ...; see Rules). Both schemas are compiled
// by santhosh-tekuri/jsonschema, as the runtime compiles them, and the
// checker walks the compiled schemas, so $ref, $defs, allOf and the drafts'
// spellings are resolved once, by the validator itself.
//
// It does no I/O: both versions are read by internal/gen/input
// (input.LoadFile, input.LoadPrevious), Build makes each a model, and
// Compare is given the two models, schema texts included.
package compat
