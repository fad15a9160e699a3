package registry_test

import (
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
	"github.com/acemq/acemq-go/runtime/registry"
	"github.com/acemq/acemq-go/runtime/registry/registrytest"
)

// TestRegistryContract runs the exported registry suite over the runtime's
// default registry and runtime/registry's three.
func TestRegistryContract(t *testing.T) {
	for _, rc := range []struct {
		name string
		new  func(t testing.TB) runtime.SchemaRegistry
	}{
		{"memory", func(testing.TB) runtime.SchemaRegistry { return registry.NewMemory() }},
		{"fingerprint", func(testing.TB) runtime.SchemaRegistry { return registry.NewFingerprint() }},
		{"directory", func(t testing.TB) runtime.SchemaRegistry {
			r, err := registry.NewDirectory(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
		{"http", func(t testing.TB) runtime.SchemaRegistry {
			r, err := registry.NewHTTP(registry.HTTPConfig{URL: confluenttest.Start(t).URL})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
	} {
		t.Run(rc.name, func(t *testing.T) { registrytest.Run(t, rc.new) })
	}
}
