// Package schema loads the message schemas a manifest names (Avro .avsc and
// JSON Schema .json files) into a language-neutral type graph whose Go names
// are already settled, ready for the emitters (emit.Types).
//
// Build maps every input at once and returns every problem it found, each an
// *Error naming the file, the place in the schema (a JSON pointer) and the
// construct that cannot map. Nothing is ever mapped to a silent `any`: a
// schema becomes a real Go type, json.RawMessage where the schema leaves the
// shape open (documented on the field), or an error.
//
// Avro schemas are parsed by hamba/avro and walked as it sees them, so the
// types are exactly what its codec accepts; JSON Schema documents are walked
// from their JSON, member order kept, with $ref resolved within a document,
// across inputs by $id, and to files beside the referring one (read from
// the fs.FS of WithFS, which internal/gen/input filled: Build then does no
// I/O).
//
// # Naming
//
// Every Go identifier a type, field or enum constant takes is decided here,
// in one used-names set for the package (seeded with the names the model
// reserves) and one per struct, in the manner of protogen. Emitters never
// invent or repair names. Schema text reaches the output only as doc comment
// lines (see DocLines) and string literals.
//
// docs/schema-mapping.md in the repository gives the whole mapping.
package schema
