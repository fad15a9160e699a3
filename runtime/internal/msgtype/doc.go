// Package msgtype owns the message type: runtime.MessageType[T] is an
// alias of its MessageType[T], and runtime.Format, runtime.Codec and
// runtime.SchemaRegistry of its types, so that both package runtime and
// the facade for generated code (runtime/acemqimpl) reach what a type
// holds with typed generic functions (SetJSONCheck, JSONCheckOf, ...)
// instead of hooks: the generated JSON check, decode shape, encoder and
// decoder, the type's own registry, and the codecs made from it, once. The
// codecs themselves are package runtime's, which gives New its
// constructors (Codecs).
//
// Only the methods a user calls are exported methods (Name, Format,
// Schema, Codec, Validate): an exported method here is callable through
// the alias. What only the runtime and the facade need is a function.
package msgtype
