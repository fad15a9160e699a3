package codec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

// Two fingerprint registries (two processes) give the same schema the same
// id without sharing anything, and that id is SchemaID's.
func TestFingerprintRegistryIDsDoNotDependOnTheProcess(t *testing.T) {
	ctx := context.Background()
	a, b := NewFingerprintRegistry(), NewFingerprintRegistry()
	idA2, _ := a.Register(ctx, "orders", codecOrderV2)
	idA1, _ := a.Register(ctx, "orders", codecOrderV1)
	idB1, _ := b.Register(ctx, "other", codecOrderV1) // other order, other subject
	idB2, _ := b.Register(ctx, "orders", codecOrderV2)
	want1, err := SchemaID(codecOrderV1)
	if err != nil {
		t.Fatal(err)
	}
	if idA1 != idB1 || idA2 != idB2 || idA1 != want1 || idA1 == idA2 {
		t.Fatalf("ids: a=(%d,%d) b=(%d,%d) SchemaID(v1)=%d", idA1, idA2, idB1, idB2, want1)
	}
	if idA1 < 1 || idA1 > 1<<31-1 {
		t.Fatalf("id %d is outside the Confluent id space", idA1)
	}
	if _, err := b.Schema(ctx, want1+1); !errors.Is(err, core.ErrSchemaNotFound) ||
		!strings.Contains(err.Error(), fmt.Sprintf("schema id %d: acemq: schema not found", want1+1)) {
		t.Fatalf("unknown id: %v", err)
	}
}

// Two schemas with one derived id: the second is refused, never given the
// first one's id.
func TestFingerprintRegistryRefusesACollision(t *testing.T) {
	r := NewFingerprintRegistry()
	id, _ := SchemaID(codecOrderV1)
	r.byID[id] = fingerprintEntry{text: codecOrderV2, fp: [32]byte{1}} // another schema holding v1's id
	_, err := r.Register(context.Background(), "orders", codecOrderV1)
	var ce *SchemaIDCollisionError
	if !errors.Is(err, core.ErrSchemaIDCollision) || !errors.As(err, &ce) || ce.ID != id {
		t.Fatalf("collision: %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("schema id %d is derived from two different schemas", id)) {
		t.Fatalf("collision text: %v", err)
	}
}

// The default registry learns each codec's reader schema, so a body written
// with that schema by another process (same derived id) decodes.
func TestFingerprintRegistryLearnsTheReaderSchema(t *testing.T) {
	ctx := context.Background()
	producer := codecMustAvro(t, NewFingerprintRegistry(), "orders", codecOrderV1)
	consumer := codecMustAvro(t, NewFingerprintRegistry(), "orders", codecOrderV1)
	body, err := producer.Encode(ctx, codecOrderV1Go{ID: "A-1"})
	if err != nil {
		t.Fatal(err)
	}
	var got codecOrderV1Go
	if err := consumer.Decode(ctx, body, &got); err != nil || got.ID != "A-1" {
		t.Fatalf("decode in the other process: %+v, %v", got, err)
	}
}
