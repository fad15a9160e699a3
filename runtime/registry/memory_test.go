package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime"
)

func TestMemoryRegistryIDs(t *testing.T) {
	ctx := context.Background()
	r := NewMemory()
	id1, err := r.Register(ctx, "orders", codecOrderV1)
	if err != nil || id1 != 1 {
		t.Fatalf("first id %d, %v; want 1", id1, err)
	}
	id2, err := r.Register(ctx, "orders", codecOrderV2)
	if err != nil || id2 != 2 {
		t.Fatalf("second id %d, %v; want 2", id2, err)
	}
	// The same schema, spelled differently (whitespace, a doc, attribute
	// order): the same canonical form, the same id.
	respelled := `{ "name": "Order", "doc": "an order",
	   "type": "record", "fields": [ {"type": "string", "name": "id"} ] }`
	if id, err := r.Register(ctx, "orders", respelled); err != nil || id != 1 {
		t.Fatalf("re-registering v1: %d, %v", id, err)
	}
	// Under another subject too, as a Confluent registry does.
	if id, err := r.Register(ctx, "archive", codecOrderV1); err != nil || id != 1 {
		t.Fatalf("v1 under another subject: %d, %v", id, err)
	}
	if got := r.Versions("orders"); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("versions of orders %v", got)
	}
	if got := r.Versions("archive"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("versions of archive %v", got)
	}
	if got := r.Versions("nothing"); got != nil {
		t.Fatalf("versions of an unknown subject %v", got)
	}
	// Schema returns the text first registered.
	if s, err := r.Schema(ctx, 1); err != nil || s != codecOrderV1 {
		t.Fatalf("Schema(1) = %q, %v", s, err)
	}
}

func TestMemoryRegistryRefusesABadSchema(t *testing.T) {
	r := NewMemory()
	_, err := r.Register(context.Background(), "s", `{"type":"record","name":"R","fields":[{"name":"a","type":"nope"}]}`)
	if err == nil || !strings.Contains(err.Error(), `register schema under subject "s": Avro schema does not parse`) {
		t.Fatalf("got %v", err)
	}
	if _, err := r.Schema(context.Background(), 1); !errors.Is(err, runtime.ErrSchemaNotFound) {
		t.Fatalf("a refused schema took an id: %v", err)
	}
}
