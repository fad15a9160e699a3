package runtime_test

import (
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/registry"
)

// With no shared registry (the default), an Avro publish carries its
// writer schema in x-acemq-schema, as hamba writes it (no docs, no
// defaults), with the fingerprint beside it; with a registry configured it
// does not (the registry is where readers find it).
func TestAvroPublishCarriesItsSchemaWithoutASharedRegistry(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"record","name":"Order","namespace":"shop","doc":"an order","fields":[{"name":"id","type":"string","doc":"its id"},{"name":"note","type":["null","string"],"default":null}]}`
	type order struct {
		ID   string  `avro:"id"`
		Note *string `avro:"note"`
	}
	q := brokertest.Queue(t, "avrocarry")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, 10*time.Second)
	if err := runtime.Publish(ctx, c, runtime.NewAvroType[order]("shop.order", "orders", schema), "", order{ID: "A-1"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	shared := runtime.NewAvroType[order]("shop.order", "orders", schema, runtime.WithSchemaRegistry(registry.NewMemory()))
	if err := runtime.Publish(ctx, c, shared, "", order{ID: "A-2"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	ds := drain(t, q, 2, wait)
	want := `{"name":"shop.Order","type":"record","fields":[{"name":"id","type":"string"},{"name":"note","type":["null","string"]}]}`
	if got := headerString(t, ds[0], wire.HeaderSchema); got != want {
		t.Errorf("x-acemq-schema = %s, want %s", got, want)
	}
	fp, _ := registry.SchemaFingerprint(schema)
	if got := headerString(t, ds[0], wire.HeaderSchemaFingerprint); got != fp {
		t.Errorf("x-acemq-schema-fingerprint = %s, want %s", got, fp)
	}
	if got, _ := registry.SchemaFingerprint(want); got != fp {
		t.Errorf("the carried schema's fingerprint %s is not the schema's, %s", got, fp)
	}
	if v, ok := ds[1].Headers[wire.HeaderSchema]; ok {
		t.Errorf("with a registry configured, x-acemq-schema = %v, want none", v)
	}
}
