package runtime_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The runtime is what every service links: it must never pull in the
// generator, jennifer or a YAML parser.
func TestRuntimeDependenciesStayHonest(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/acemq/acemq-go/runtime").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/acemq/acemq-go/generator",
		"github.com/acemq/acemq-go/cmd",
		"github.com/dave/jennifer",
		"gopkg.in/yaml",
		"go.yaml.in/yaml",
		"github.com/goccy/go-yaml",
		"github.com/rogpeppe/go-internal",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages; expected the runtime's whole graph", len(deps))
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("runtime depends on %s", dep)
			}
		}
	}
}
