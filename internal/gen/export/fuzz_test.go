package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/model"
)

// fuzzManifest is a manifest whose queue, exchange and routing key come
// from the fuzzer (as YAML double-quoted strings).
func fuzzManifest(queue, exchange, key string) string {
	q := strconv.Quote
	return `version: 1
package: p
policies:
  slow: {exponential: {attempts: 4, initial: 10s, max: 60s}}
messages:
  M: {type: m.v1, schema: m.json}
exchanges:
  ` + q(exchange) + `: {type: topic}
queues:
  ` + q(queue) + `:
    dead_letter: true
    retry: slow
    bindings: [{exchange: ` + q(exchange) + `, routing_key: ` + q(key) + `}]
    consumes: [M]
publishers:
  P:
    exchange: ` + q(exchange) + `
    messages: {M: {routing_key: ` + q(key) + `}}
`
}

func fuzzModel(t *testing.T, dir, src string) *model.Model {
	f, err := manifest.Parse("acemq.yaml", []byte(src))
	if err != nil || f == nil {
		return nil
	}
	name, err := input.Name(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Build(f, input.OS(), name)
	if err != nil {
		return nil
	}
	return m
}

// FuzzExport: whatever the names, every format renders; the JSON formats
// are valid JSON that keeps the names exactly; the text formats have as
// many lines as with plain names, so no name can start a line of its own
// (a DOT statement, a Mermaid edge, a Markdown heading).
func FuzzExport(f *testing.F) {
	f.Add("orders.new", "orders", "order.placed")
	f.Add("key */ with\nnewline //go:generate", `ex"change\`, "a|b`c`<d>#e")
	f.Add("订单", "café-crème", "\x1e\x00\t")
	f.Add("q]\n%% x\n  a --> b", "x}}\"];\ndigraph", "## heading\n| a | b |")
	f.Fuzz(func(t *testing.T, queue, exchange, key string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "m.json"), []byte(`{"type": "object"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		m := fuzzModel(t, dir, fuzzManifest(queue, exchange, key))
		if m == nil {
			return // a manifest the generator refuses
		}
		plain := fuzzModel(t, dir, fuzzManifest("q", "x", "k"))
		if plain == nil {
			t.Fatal("the plain manifest does not build")
		}
		for _, format := range Formats {
			got, err := Render(m, format, Options{Source: "acemq.yaml"})
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			switch format {
			case "definitions", "asyncapi":
				var v any
				if err := json.Unmarshal(got, &v); err != nil {
					t.Fatalf("%s is not JSON: %v", format, err)
				}
				for _, name := range []string{m.Queues[0].Name, m.Exchanges[0].Name} {
					want, _ := json.Marshal(name)
					want = bytes.ReplaceAll(want, []byte(`\u003c`), []byte("<")) // SetEscapeHTML(false)
					want = bytes.ReplaceAll(want, []byte(`\u003e`), []byte(">"))
					want = bytes.ReplaceAll(want, []byte(`\u0026`), []byte("&"))
					if !bytes.Contains(got, want) {
						t.Errorf("%s lost the name %q", format, name)
					}
				}
			default:
				base, _ := Render(plain, format, Options{Source: "acemq.yaml"})
				if g, w := strings.Count(string(got), "\n"), strings.Count(string(base), "\n"); g != w {
					t.Errorf("%s: %d lines with these names, %d with plain ones:\n%s", format, g, w, got)
				}
			}
		}
	})
}
