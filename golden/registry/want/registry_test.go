package registry_test

import (
	"context"
	"testing"
	"time"

	registry "github.com/acemq/acemq-go/golden/registry/want"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
	schemaregistry "github.com/acemq/acemq-go/runtime/registry"
)

type handler struct{ got chan string }

func (h handler) HandleOrderPlaced(_ context.Context, m *runtime.Message[registry.OrderPlaced]) runtime.Ack {
	h.got <- m.Payload.ID
	return runtime.Accept()
}

// The generated types use the manifest's registry: the schema lands in the
// directory ${ACEMQ_GOLDEN_REGISTRY} names, under its subject, with the id
// derived from it, and a message round-trips through it.
func TestTheManifestRegistryIsUsed(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ACEMQ_GOLDEN_REGISTRY", dir)
	ctx, conn := goldentest.Connect(t, registry.Topology())
	h := handler{got: make(chan string, 1)}
	consumer, err := registry.ConsumeGoldenRegistry(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeGoldenRegistry: %v", err)
	}
	defer consumer.Close(context.Background())
	if err := registry.NewDirectPublisher(conn).PublishOrderPlaced(ctx, registry.OrderPlaced{ID: "A-1"}); err != nil {
		t.Fatalf("publish: %v", err)
	}
	select {
	case id := <-h.got:
		if id != "A-1" {
			t.Fatalf("handled %q", id)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("not handled")
	}
	reg, err := schemaregistry.NewDirectory(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := reg.Index()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := schemaregistry.SchemaID(registry.TypeOfOrderPlaced().Schema())
	if len(entries) != 1 || entries[0].Subject != "golden-registry-orders" || entries[0].ID != want || entries[0].Version != 1 {
		t.Fatalf("the registry directory's index: %+v, want subject golden-registry-orders version 1 id %d", entries, want)
	}
	// SchemaRegistry() is the registry the type registered with.
	got, err := registry.SchemaRegistry().Schema(ctx, want)
	if err != nil || got != registry.TypeOfOrderPlaced().Schema() {
		t.Fatalf("SchemaRegistry().Schema(%d) = %q, %v; want the type's schema", want, got, err)
	}
}

// Without a broker: the message type's codec round-trips a value.
func TestCodecRoundTrip(t *testing.T) {
	goldentest.RoundTrip(t, registry.TypeOfOrderPlaced(), registry.OrderPlaced{ID: "A-1"})
}
