package runtime_test

import (
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
	"github.com/acemq/acemq-go/runtime/registrytest"
)

// TestRegistryContract runs the exported registry suite over the runtime's
// four registries.
func TestRegistryContract(t *testing.T) {
	for _, rc := range []struct {
		name string
		new  func(t testing.TB) runtime.SchemaRegistry
	}{
		{"memory", func(testing.TB) runtime.SchemaRegistry { return runtime.NewMemoryRegistry() }},
		{"fingerprint", func(testing.TB) runtime.SchemaRegistry { return runtime.NewFingerprintRegistry() }},
		{"directory", func(t testing.TB) runtime.SchemaRegistry {
			r, err := runtime.NewDirectoryRegistry(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
		{"http", func(t testing.TB) runtime.SchemaRegistry {
			r, err := runtime.NewHTTPRegistry(runtime.HTTPRegistryConfig{URL: confluenttest.Start(t).URL})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
	} {
		t.Run(rc.name, func(t *testing.T) { registrytest.Run(t, rc.new) })
	}
}
