// Package emit turns a model into Go source with jennifer, one file per
// concern, each named with Suffix: types.acemq.go (the payload types, see
// Types), checks.acemq.go (the JSON checks), codec.acemq.go (the JSON
// encoders and decoders), messages.acemq.go (the version guard, schema
// texts and message type variables), policies.acemq.go, topology.acemq.go,
// publishers.acemq.go and consumers.acemq.go. Ours tells a file acemq-gen
// wrote from anyone else's.
//
// Emitters take every name from the model and never invent one. Text that
// comes from the manifest reaches comments only through %q, and string
// literals only through jen.Lit, so it can neither end a comment nor a
// literal, nor start a //go: directive.
package emit
