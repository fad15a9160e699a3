package registry

import (
	"context"

	"github.com/acemq/acemq-go/runtime/internal/schemareg"
)

// Memory is a runtime.SchemaRegistry held in memory, for tests and for
// services whose publishers and consumers share one process. Ids are
// assigned on registration, from 1 up. Like a Confluent registry, an id
// names a schema, not a subject: the same schema (the same Avro canonical
// form, so whitespace, field order of attributes and docs do not matter)
// gets the same id under any subject, and registering it again returns that
// id. Safe for concurrent use.
type Memory struct{ m *schemareg.Memory }

// NewMemory returns an empty registry.
func NewMemory() *Memory { return &Memory{m: schemareg.NewMemory()} }

// Register stores schema (Avro schema text) under subject and returns its
// id. A schema that does not parse is an error. ctx is checked before the
// work starts; the call itself never blocks on I/O.
func (r *Memory) Register(ctx context.Context, subject, schema string) (int, error) {
	return r.m.Register(ctx, subject, schema)
}

// Schema returns the text of the schema registered with id, or an error
// wrapping runtime.ErrSchemaNotFound. ctx is checked before the lookup.
func (r *Memory) Schema(ctx context.Context, id int) (string, error) { return r.m.Schema(ctx, id) }

// Versions returns the ids registered under subject, oldest first (nil for
// an unknown subject).
func (r *Memory) Versions(subject string) []int { return r.m.Versions(subject) }
