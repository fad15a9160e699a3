package registry

import "github.com/acemq/acemq-go/runtime/internal/codec"

// Fingerprint is the registry a connection uses when it is given none:
// held in memory, but its ids are derived from each schema's canonical form
// (SchemaID), not from the order of registration, so two processes built
// from the same manifest agree on every id without sharing anything. The
// Avro codec also teaches it each reader schema it is built with, so a
// consumer can look up the id a publisher in another process wrote with the
// same schema.
//
// What it cannot do is know a schema no codec of this process uses: a v2
// consumer reading a v1 producer's bodies needs a registry both share (a
// Directory or an HTTP), or the writer's schema carried in the message
// (x-acemq-schema, docs/codecs.md). Two schemas of one process whose ids
// collide (a chance of about n²/2³² for n schemas) make Register fail with
// runtime.ErrSchemaIDCollision rather than share an id. Safe for concurrent
// use.
type Fingerprint = codec.FingerprintRegistry

// NewFingerprint returns an empty Fingerprint registry.
func NewFingerprint() *Fingerprint { return codec.NewFingerprintRegistry() }

// SchemaIDCollisionError is two different schemas whose derived ids are
// equal. It matches runtime.ErrSchemaIDCollision.
type SchemaIDCollisionError = codec.SchemaIDCollisionError

// SchemaFingerprint returns the fingerprint acemq writes in
// x-acemq-schema-fingerprint for an Avro schema: "sha256:" and the hex
// SHA-256 of its Parsing Canonical Form, so whitespace, attribute order and
// docs do not change it.
func SchemaFingerprint(schema string) (string, error) { return codec.SchemaFingerprint(schema) }

// SchemaID returns the id acemq derives from an Avro schema: the first four
// bytes of the SHA-256 of its Parsing Canonical Form, big-endian, with the
// top bit cleared so it is a positive 32-bit int as Confluent's ids are (an
// id of 0 becomes 1). Every process computes the same id for the same
// schema; the Fingerprint registry numbers schemas this way, and a
// Directory does too unless two schemas of its index collide.
func SchemaID(schema string) (int, error) { return codec.SchemaID(schema) }
