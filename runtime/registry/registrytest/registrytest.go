// Package registrytest is the behaviour every runtime.SchemaRegistry must
// have, as a suite another implementation can run against itself (as
// Watermill's pubsub/tests does for Pub/Subs):
//
//	func TestMyRegistry(t *testing.T) {
//		registrytest.Run(t, func(t testing.TB) runtime.SchemaRegistry { return newMyRegistry(t) })
//	}
//
// runtime/registry runs it over the runtime's default registry and its
// own three (memory, directory, HTTP against an in-test Confluent server).
package registrytest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/hamba/avro/v2"
)

// Schemas the suite registers.
const (
	OrderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	OrderV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},
		{"name":"currency","type":"string","default":"EUR"}]}`
	Payment = `{"type":"record","name":"Payment","namespace":"acemq.test","fields":[
		{"name":"id","type":{"type":"string","logicalType":"uuid"}},
		{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}`
	Contract = `{"type":"record","name":"Contract","fields":[
		{"name":"id","type":"string"},{"name":"count","type":"int"},
		{"name":"tags","type":{"type":"array","items":"string"}}]}`
)

type orderV1 struct {
	ID string `avro:"id"`
}

type orderV2 struct {
	ID       string `avro:"id"`
	Currency string `avro:"currency"`
}

// Run runs the suite; newRegistry returns an empty registry each time.
func Run(t *testing.T, newRegistry func(t testing.TB) runtime.SchemaRegistry) {
	t.Run("SameSchemaSameID", func(t *testing.T) { sameID(t, newRegistry(t)) })
	t.Run("SchemaByID", func(t *testing.T) { schemaByID(t, newRegistry(t)) })
	t.Run("UnknownID", func(t *testing.T) { unknownID(t, newRegistry(t)) })
	t.Run("Cancelled", func(t *testing.T) { cancelled(t, newRegistry(t)) })
	t.Run("Concurrent", func(t *testing.T) { concurrent(t, newRegistry(t)) })
	t.Run("ServesTheAvroCodec", func(t *testing.T) { servesAvro(t, newRegistry(t)) })
}

// Same schema, same id; the same canonical form respelled, same id;
// another schema, another id.
func sameID(t *testing.T, r runtime.SchemaRegistry) {
	ctx := context.Background()
	id1, err := r.Register(ctx, "orders", OrderV1)
	if err != nil || id1 < 1 {
		t.Fatalf("Register v1: %d, %v", id1, err)
	}
	again, err := r.Register(ctx, "orders", OrderV1)
	if err != nil || again != id1 {
		t.Fatalf("Register v1 again: %d, %v; want %d", again, err, id1)
	}
	respelled := "{\n  \"type\": \"record\", \"name\": \"Order\",\n  \"fields\": [{\"name\": \"id\", \"type\": \"string\"}]\n}"
	if id, err := r.Register(ctx, "orders", respelled); err != nil || id != id1 {
		t.Fatalf("Register v1 respelled: %d, %v; want %d", id, err, id1)
	}
	id2, err := r.Register(ctx, "orders", OrderV2)
	if err != nil || id2 < 1 || id2 == id1 {
		t.Fatalf("Register v2: %d, %v (v1 is %d)", id2, err, id1)
	}
}

// Schema(id) returns the schema registered (a registry may reformat it).
func schemaByID(t *testing.T, r runtime.SchemaRegistry) {
	ctx := context.Background()
	for _, schema := range []string{OrderV1, OrderV2, Payment} {
		id, err := r.Register(ctx, "s", schema)
		if err != nil {
			t.Fatal(err)
		}
		text, err := r.Schema(ctx, id)
		if err != nil {
			t.Fatalf("Schema(%d): %v", id, err)
		}
		got, err1 := avro.ParseWithCache(text, "", &avro.SchemaCache{})
		want, err2 := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
		if err1 != nil || err2 != nil || got.Fingerprint() != want.Fingerprint() {
			t.Fatalf("Schema(%d) = %s, want %s (%v, %v)", id, text, schema, err1, err2)
		}
	}
}

// An unknown id is an error matching runtime.ErrSchemaNotFound.
func unknownID(t *testing.T, r runtime.SchemaRegistry) {
	ctx := context.Background()
	if _, err := r.Register(ctx, "s", OrderV1); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{0, -1, 424242} {
		if s, err := r.Schema(ctx, id); !errors.Is(err, runtime.ErrSchemaNotFound) {
			t.Errorf("Schema(%d) = %q, %v; want ErrSchemaNotFound", id, s, err)
		}
	}
}

// A cancelled ctx is an error matching context.Canceled, cached or not.
func cancelled(t *testing.T, r runtime.SchemaRegistry) {
	id, err := r.Register(context.Background(), "s", OrderV1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Register(ctx, "s", OrderV2); !errors.Is(err, context.Canceled) {
		t.Errorf("Register under a cancelled ctx: %v", err)
	}
	if _, err := r.Schema(ctx, id); !errors.Is(err, context.Canceled) {
		t.Errorf("Schema under a cancelled ctx: %v", err)
	}
}

// 16 goroutines registering four schemas in different orders agree on
// every id, and no two schemas share one.
func concurrent(t *testing.T, r runtime.SchemaRegistry) {
	ctx := context.Background()
	schemas := []string{OrderV1, OrderV2, Payment, Contract}
	const workers = 16
	ids := make([][]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range schemas {
				s := schemas[(i+w)%len(schemas)]
				id, err := r.Register(ctx, "s", s)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := r.Schema(ctx, id); err != nil {
					t.Error(err)
				}
				ids[w] = append(ids[w], id)
			}
			// Back into schema order for comparison.
			k := len(schemas) - w%len(schemas)
			ids[w] = append(ids[w][k:], ids[w][:k]...)
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for w := range workers {
		if !reflect.DeepEqual(ids[w], ids[0]) {
			t.Fatalf("worker %d got ids %v, worker 0 %v", w, ids[w], ids[0])
		}
	}
	for _, id := range ids[0] {
		if seen[id] {
			t.Fatalf("two schemas share id %d: %v", id, ids[0])
		}
		seen[id] = true
	}
}

// The Avro codec reads a v1 body as v2 through the registry.
func servesAvro(t *testing.T, r runtime.SchemaRegistry) {
	ctx := context.Background()
	w, err := runtime.NewAvroCodec(r, "orders", OrderV1)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := runtime.NewAvroCodec(r, "orders", OrderV2)
	if err != nil {
		t.Fatal(err)
	}
	body, err := w.Encode(ctx, orderV1{ID: "A-1"})
	if err != nil {
		t.Fatal(err)
	}
	var got orderV2
	if err := rd.Decode(ctx, body, &got); err != nil || got != (orderV2{ID: "A-1", Currency: "EUR"}) {
		t.Fatalf("v1 body read as v2: %+v, %v", got, err)
	}
}
