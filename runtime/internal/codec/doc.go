// Package codec owns the codecs behind runtime.Codec: Avro in the
// Confluent wire format (with the schema carried in x-acemq-schema and
// checked against x-acemq-schema-fingerprint), JSON validated by
// santhosh-tekuri/jsonschema (the reference validator, or a generated
// check first), text; the FingerprintRegistry that derives ids from a
// schema's canonical form; and Codecs, the constructors a message type
// (internal/msgtype) makes its codecs with. Package runtime aliases
// FingerprintRegistry and SchemaIDCollisionError and forwards NewAvroCodec,
// NewJSONCodec, SchemaFingerprint and SchemaID; what a codec learns of the
// delivery it decodes (core.DecodeInfo) comes in its ctx.
package codec
