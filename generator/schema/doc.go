// Package schema loads the message schemas a manifest names (Avro .avsc and
// JSON Schema .json files) into a language-neutral type graph whose Go names
// are already settled, ready for the emitters.
//
// Build maps every input at once and returns every problem it found, each an
// *Error naming the file, the place in the schema and the construct that
// cannot map. Nothing is ever mapped to a silent `any`: a schema either
// becomes a real Go type or is refused.
//
// # Naming
//
// Every Go identifier a type, field or enum constant takes is decided here,
// in one used-names set per scope (package level for types and constants,
// one per struct for fields), in the manner of protogen. Emitters never
// invent or repair names.
package schema
