package codec

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
	"github.com/hamba/avro/v2"
)

// MaxCarriedSchema is the longest writer schema Publish carries in
// x-acemq-schema; a longer one is not carried (its readers need a shared
// registry), and a longer header is not read.
const MaxCarriedSchema = 16 << 10

// SchemaFingerprint returns the fingerprint acemq writes in
// x-acemq-schema-fingerprint for an Avro schema: "sha256:" and the hex
// SHA-256 of its Parsing Canonical Form, so whitespace, attribute order and
// docs do not change it.
func SchemaFingerprint(schema string) (string, error) {
	s, err := avroParse(schema)
	if err != nil {
		return "", err
	}
	return fingerprintText(s), nil
}

func fingerprintText(s avro.Schema) string { return schemareg.FingerprintText(s) }

// SchemaID returns the id acemq derives from an Avro schema: the first four
// bytes of the SHA-256 of its Parsing Canonical Form, big-endian, with the
// top bit cleared so it is a positive 32-bit int as Confluent's ids are (an
// id of 0 becomes 1). Every process computes the same id for the same
// schema; the FingerprintRegistry numbers schemas this way, and the
// registry.Directory does too unless two schemas of its index collide.
func SchemaID(schema string) (int, error) {
	s, err := avroParse(schema)
	if err != nil {
		return 0, err
	}
	return fingerprintID(s.Fingerprint()), nil
}

func fingerprintID(fp [32]byte) int { return schemareg.ID(fp) }

// avroParse parses one Avro schema with a cache of its own, so named types
// of one schema never leak into another (two versions of "Order" coexist).
func avroParse(schema string) (avro.Schema, error) { return schemareg.Parse(schema) }

// FingerprintRegistry is the default msgtype.SchemaRegistry: held in memory, but its
// ids are derived from each schema's canonical form (SchemaID), not from
// the order of registration, so two processes built from the same manifest
// agree on every id without sharing anything. The Avro codec also teaches it
// each reader schema it is built with, so a consumer can look up the id a
// publisher in another process wrote with the same schema.
//
// What it cannot do is know a schema no codec of this process uses: a v2
// consumer reading a v1 producer's bodies needs a registry both share (a
// registry.Directory or a registry.HTTP). Two schemas of one process whose
// ids collide (a chance of about n²/2³² for n schemas) make Register fail
// with core.ErrSchemaIDCollision rather than share an id. Safe for concurrent
// use.
type FingerprintRegistry struct {
	mu   sync.RWMutex
	byID map[int]fingerprintEntry
}

type fingerprintEntry struct {
	text string
	fp   [32]byte
}

// NewFingerprintRegistry returns an empty registry.
func NewFingerprintRegistry() *FingerprintRegistry {
	return &FingerprintRegistry{byID: map[int]fingerprintEntry{}}
}

// Register returns schema's derived id and remembers the schema under it.
// The subject plays no part in the id (as in Confluent, an id names a
// schema). A schema that does not parse is an error, and so is one whose id
// another schema already holds (core.ErrSchemaIDCollision). ctx is checked
// before the work starts; the call never blocks on I/O.
func (r *FingerprintRegistry) Register(ctx context.Context, subject, schema string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	parsed, err := avroParse(schema)
	if err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	id, err := r.learn(parsed, schema)
	if err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	return id, nil
}

// learn stores a parsed schema under its derived id.
func (r *FingerprintRegistry) learn(parsed avro.Schema, text string) (int, error) {
	fp := parsed.Fingerprint()
	id := fingerprintID(fp)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byID[id]; ok {
		if e.fp != fp {
			return 0, &SchemaIDCollisionError{ID: id, Fingerprints: [2]string{
				"sha256:" + hex.EncodeToString(e.fp[:]), "sha256:" + hex.EncodeToString(fp[:])}}
		}
		return id, nil
	}
	r.byID[id] = fingerprintEntry{text: text, fp: fp}
	return id, nil
}

// Schema returns the schema known under id, or an error wrapping
// core.ErrSchemaNotFound. ctx is checked before the lookup.
func (r *FingerprintRegistry) Schema(ctx context.Context, id int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("schema %d: %w", id, err)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.byID[id]
	if !ok {
		return "", fmt.Errorf("schema id %d: %w (the default registry knows only the schemas of this program: share a directory or HTTP registry between the publisher and the consumer)", id, core.ErrSchemaNotFound)
	}
	return e.text, nil
}

// SchemaIDCollisionError is two different schemas whose derived ids are
// equal. It matches core.ErrSchemaIDCollision.
type SchemaIDCollisionError struct {
	ID           int
	Fingerprints [2]string // the schema already holding the id, the newcomer
}

func (e *SchemaIDCollisionError) Error() string {
	return fmt.Sprintf("schema id %d is derived from two different schemas (%s and %s): use a registry.Directory or a registry.HTTP, which assign ids",
		e.ID, e.Fingerprints[0], e.Fingerprints[1])
}

func (e *SchemaIDCollisionError) Unwrap() error { return core.ErrSchemaIDCollision }

// learner is a registry a codec may teach its reader schema without
// publishing it anywhere: one held in memory whose ids do not depend on
// order.
type learner interface {
	learn(parsed avro.Schema, text string) (int, error)
}
