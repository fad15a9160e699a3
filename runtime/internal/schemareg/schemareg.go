// Package schemareg is what package runtime and runtime/registry share
// about Avro schema registries without importing each other's API: the
// sentinel errors (runtime exports them as ErrRegistryUnavailable and
// ErrSchemaNotFound), the parsing of a schema with a cache of its own, the
// fingerprint text and the derived id, and the registry held in memory
// (registry.Memory wraps it; runtime's own tests use it directly, since
// they cannot import runtime/registry).
package schemareg

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/hamba/avro/v2"
)

var (
	// ErrUnavailable is runtime.ErrRegistryUnavailable.
	ErrUnavailable = errors.New("acemq: schema registry unavailable")
	// ErrNotFound is runtime.ErrSchemaNotFound.
	ErrNotFound = errors.New("acemq: schema not found")
)

// Parse parses one Avro schema with a cache of its own, so named types of
// one schema never leak into another (two versions of "Order" coexist).
func Parse(schema string) (s avro.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Avro schema does not parse: panic: %v", r)
		}
	}()
	s, err = avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("Avro schema does not parse: %w", err)
	}
	return s, nil
}

// FingerprintText is what acemq writes in x-acemq-schema-fingerprint for
// s: "sha256:" and the hex SHA-256 of its Parsing Canonical Form.
func FingerprintText(s avro.Schema) string {
	fp := s.Fingerprint()
	return "sha256:" + hex.EncodeToString(fp[:])
}

// ID is the id acemq derives from a canonical-form fingerprint: its first
// four bytes, big-endian, with the top bit cleared (an id of 0 becomes 1).
func ID(fp [32]byte) int {
	id := int(binary.BigEndian.Uint32(fp[:4]) & 0x7fffffff)
	if id == 0 {
		id = 1
	}
	return id
}
