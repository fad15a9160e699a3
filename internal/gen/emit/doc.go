// Package emit turns a model into Go source with jennifer, one file per
// concern: types.go (the payload types, see Types), messages.go (the
// version guard, schema texts and message type variables), policies.go,
// topology.go, publishers.go and consumers.go.
//
// Emitters take every name from the model and never invent one. Text that
// comes from the manifest reaches comments only through %q, and string
// literals only through jen.Lit, so it can neither end a comment nor a
// literal, nor start a //go: directive.
package emit
