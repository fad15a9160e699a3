package runtime_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
		"github.com/streadway/amqp", // amqp091-go's ancestor: goimports may pick it for amqp.Error, and errors.As would then never match
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

// goIn runs the go command in dir as a user's module would (no go.work of
// ours) and returns its output.
func goIn(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// modules is the set of module paths of `go list -m all` in dir.
func modules(tb testing.TB, dir string) map[string]bool {
	tb.Helper()
	set := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(goIn(tb, dir, "list", "-m", "-f", "{{.Path}}", "all")), "\n") {
		set[line] = true
	}
	return set
}

// The runtime module requires these and nothing else (the OTel SDK only for
// its own tests, which check the spans and instruments it makes): a new
// direct requirement is a reviewed change to this list.
var runtimeRequires = []string{
	"github.com/google/uuid",
	"github.com/hamba/avro/v2",
	"github.com/rabbitmq/amqp091-go",
	"github.com/santhosh-tekuri/jsonschema/v6",
	"github.com/segmentio/encoding",
	"go.opentelemetry.io/otel",
	"go.opentelemetry.io/otel/metric",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/sdk/metric",
	"go.opentelemetry.io/otel/trace",
	"golang.org/x/text",
}

// A service that imports only the runtime gets the runtime's own modules in
// its module graph (`go list -m all`) and nothing more: not the generator's,
// not the operator command's.
func TestAServiceTakesOnlyTheRuntimesModules(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs go mod tidy in a scratch module")
	}
	dir := strings.TrimSpace(goIn(t, ".", "list", "-m", "-f", "{{.Dir}}"))
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal([]byte(goIn(t, dir, "mod", "edit", "-json")), &mod); err != nil {
		t.Fatal(err)
	}
	var direct []string
	for _, r := range mod.Require {
		if !r.Indirect {
			direct = append(direct, r.Path)
		}
	}
	if got, want := strings.Join(direct, " "), strings.Join(runtimeRequires, " "); got != want {
		t.Errorf("runtime/go.mod requires directly\n  %s\nwant\n  %s", got, want)
	}

	svc := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/svc\n\ngo 1.26.0\n\nrequire github.com/acemq/acemq-go/runtime v0.0.0\n\nreplace github.com/acemq/acemq-go/runtime => " + dir + "\n",
		"main.go": "package main\n\nimport \"github.com/acemq/acemq-go/runtime\"\n\nfunc main() { _ = runtime.Accept() }\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(svc, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goIn(t, svc, "mod", "tidy")
	// The runtime's own graph, listed from a copy of its go.mod and go.sum
	// (go list -m all with -mod=mod writes go.sum lines for every go.mod in
	// the graph: never in the working tree).
	self := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(self, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	own := modules(t, self)
	got := modules(t, svc)
	var extra []string
	for m := range got {
		if !own[m] && m != "example.com/svc" && m != "github.com/acemq/acemq-go/runtime" {
			extra = append(extra, m)
		}
	}
	if len(extra) > 0 {
		t.Errorf("a service importing only the runtime has modules the runtime does not: %v", extra)
	}
	for _, f := range []string{"github.com/acemq/acemq-go\n", "github.com/spf13/cobra", "github.com/dave/jennifer", "github.com/michaelklishin/rabbit-hole", "github.com/prometheus/client_golang"} {
		if got[strings.TrimSpace(f)] {
			t.Errorf("a service importing only the runtime has %s in its module graph", strings.TrimSpace(f))
		}
	}
	t.Logf("a service importing only the runtime: %d modules in go list -m all (the runtime module's own graph: %d)", len(got), len(own))
}

// engineLayers are runtime/internal's engine packages and what each may
// import of the module: the imports go one way, down (docs/design.md,
// "The runtime's packages"); none imports package runtime.
var engineLayers = map[string][]string{
	"internal/core":    {"internal/msgtype", "internal/schemareg", "internal/jsoncheck", "wire"},
	"internal/codec":   {"internal/core", "internal/msgtype", "internal/schemareg", "internal/jsoncheck", "internal/avrounion", "wire"},
	"internal/obs":     {"internal/core", "wire"},
	"internal/amqpx":   {"internal/core", "internal/redact", "wire"},
	"internal/consume": {"internal/core", "internal/codec", "internal/obs", "internal/amqpx", "internal/msgtype", "wire"},
	"internal/rpc":     {"internal/core", "internal/obs", "internal/amqpx", "internal/msgtype", "wire"},
}

// TestInternalPackagesImportDown keeps the engines below package runtime:
// no package under runtime/internal imports runtime (or anything that
// does), and each engine imports only the layers under it.
func TestInternalPackagesImportDown(t *testing.T) {
	const mod = "github.com/acemq/acemq-go/runtime"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < len(engineLayers) {
		t.Fatalf("go list listed %d packages under internal/", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		for _, dep := range f[1:] {
			if dep == mod || strings.HasPrefix(dep, mod+"/acemqimpl") || strings.HasPrefix(dep, mod+"/acemqtest") || strings.HasPrefix(dep, mod+"/registry") {
				t.Errorf("%s depends on %s: the engines must not reach package runtime or its user packages", f[0], dep)
			}
		}
	}
	for pkg, allowed := range engineLayers {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "./"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, imp := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(imp, mod+"/")
			if ok && !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s: it may import only %v", pkg, rel, allowed)
			}
		}
	}
}
