package schemareg

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Memory is a schema registry held in memory, for tests and for
// services whose publishers and consumers share one process. Ids are
// assigned on registration, from 1 up. Like a Confluent registry, an id
// names a schema, not a subject: the same schema (the same Avro canonical
// form, so whitespace, field order of attributes and docs do not matter)
// gets the same id under any subject, and registering it again returns that
// id. Safe for concurrent use.
type Memory struct {
	mu       sync.RWMutex
	byID     []string         // byID[id-1] is the schema text first registered
	byPrint  map[[32]byte]int // canonical-form fingerprint → id
	versions map[string][]int // subject → ids in registration order
}

// NewMemory returns an empty registry.
func NewMemory() *Memory {
	return &Memory{
		byPrint:  map[[32]byte]int{},
		versions: map[string][]int{},
	}
}

// Register stores schema (Avro schema text) under subject and returns its
// id. A schema that does not parse is an error. ctx is checked before the
// work starts; the call itself never blocks on I/O.
func (r *Memory) Register(ctx context.Context, subject, schema string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	parsed, err := Parse(schema)
	if err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	fp := parsed.Fingerprint()

	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.byPrint[fp]
	if !ok {
		r.byID = append(r.byID, schema)
		id = len(r.byID)
		r.byPrint[fp] = id
	}
	if !slices.Contains(r.versions[subject], id) {
		r.versions[subject] = append(r.versions[subject], id)
	}
	return id, nil
}

// Schema returns the text of the schema registered with id, or an error
// wrapping ErrSchemaNotFound. ctx is checked before the lookup.
func (r *Memory) Schema(ctx context.Context, id int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("schema %d: %w", id, err)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if id < 1 || id > len(r.byID) {
		return "", fmt.Errorf("schema id %d: %w", id, ErrNotFound)
	}
	return r.byID[id-1], nil
}

// Versions returns the ids registered under subject, oldest first (nil for
// an unknown subject).
func (r *Memory) Versions(subject string) []int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]int(nil), r.versions[subject]...)
}
