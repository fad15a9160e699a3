package generator

import (
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// synthManifest writes a manifest of n message types (three in four JSON
// Schema, one in four Avro, each with nested objects, an enum, arrays and
// optional fields), n/10 queues consuming ten types each, one publisher of
// every type and three policies, and returns its path.
func synthManifest(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "schemas"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var m, queues, pub strings.Builder
	m.WriteString("version: 1\npackage: bench\npolicies:\n")
	m.WriteString("  standard: {exponential: {attempts: 6, initial: 10s, max: 300s}, give_up_after: 1h}\n")
	m.WriteString("  quick: {fixed: {attempts: 3, delay: 1s}}\n")
	m.WriteString("  never: {fixed: {attempts: 1, delay: 0s}}\n")
	m.WriteString("messages:\n")
	queues.WriteString("exchanges:\n  events: {type: topic}\nqueues:\n")
	pub.WriteString("publishers:\n  Events:\n    exchange: events\n    messages:\n")
	for i := range n {
		name := fmt.Sprintf("Event%03d", i)
		file, body := fmt.Sprintf("schemas/event%03d.json", i), jsonSchema(i)
		if i%4 == 3 {
			file, body = fmt.Sprintf("schemas/event%03d.avsc", i), avroSchema(i)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&m, "  %s: {type: bench.event%03d.v1, schema: %s}\n", name, i, file)
		fmt.Fprintf(&pub, "      %s: {routing_key: bench.event%03d}\n", name, i)
		if i%10 == 0 {
			fmt.Fprintf(&queues, "  bench.queue%02d:\n    dead_letter: true\n    retry: %s\n    bindings: [{exchange: events, routing_key: \"bench.#\"}]\n    consumes: [",
				i/10, []string{"standard", "quick", "never"}[i/10%3])
		}
		sep := ", "
		if i%10 == 9 || i == n-1 {
			sep = "]\n"
		}
		queues.WriteString(name + sep)
	}
	path := filepath.Join(dir, "acemq.yaml")
	if err := os.WriteFile(path, []byte(m.String()+queues.String()+pub.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func jsonSchema(i int) string {
	return fmt.Sprintf(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "description": "Event %d.",
 "type": "object", "required": ["id", "at", "kind"],
 "properties": {"id": {"type": "string"}, "at": {"type": "string", "format": "date-time"},
  "kind": {"enum": ["created", "updated", "deleted"]}, "count": {"type": "integer"},
  "tags": {"type": "array", "items": {"type": "string"}},
  "owner": {"$ref": "#/$defs/owner"}, "labels": {"type": "object", "additionalProperties": {"type": "string"}}},
 "$defs": {"owner": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "email": {"type": "string"}}}}}`, i)
}

func avroSchema(i int) string {
	return fmt.Sprintf(`{"type": "record", "name": "Event%03d", "namespace": "bench.e%03d", "doc": "Event %d.",
 "fields": [{"name": "id", "type": "string"}, {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CREATED", "UPDATED"]}},
  {"name": "note", "type": ["null", "string"], "default": null},
  {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}}]}`, i, i, i)
}

// BenchmarkGenerate200 runs the whole pipeline (read, validate, resolve,
// map 200 schemas, emit, gofmt) on a manifest of 200 message types. Its
// baseline, measured in the same run, is go/format.Source over the files
// it produces: the floor any generator writing that much Go pays. The
// x-gofmt metric is the ratio of the two.
func BenchmarkGenerate200(b *testing.B) {
	opts := Options{Manifest: synthManifest(b, 200)}
	files, err := Generate(opts)
	if err != nil {
		b.Fatal(err)
	}
	baseline := gofmtBaseline(b, files)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Generate(opts); err != nil {
			b.Fatal(err)
		}
	}
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perOp)/float64(baseline), "x-gofmt")
}

// gofmtBaseline is the time go/format.Source takes over files, per pass.
func gofmtBaseline(b *testing.B, files []File) time.Duration {
	start, passes := time.Now(), 0
	for passes < 3 || time.Since(start) < 300*time.Millisecond {
		for _, f := range files {
			if _, err := format.Source(f.Content); err != nil {
				b.Fatal(err)
			}
		}
		passes++
	}
	return time.Since(start) / time.Duration(passes)
}

// The manifest BenchmarkGenerate200 runs generates without a
// type_go_names entry: its Avro schemas each define an enum Kind and a
// record Line in a namespace of their own, which are named after their
// message (docs/schema-mapping.md#names), never a clash.
func TestGenerate200Names(t *testing.T) {
	if testing.Short() {
		t.Skip("maps 200 schemas")
	}
	files, err := Generate(Options{Manifest: synthManifest(t, 200)})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path != "types.acemq.go" {
			continue
		}
		for _, want := range []string{"type Event003Kind string", "Event003KindCreated Event003Kind = \"CREATED\"", "type Event003Line struct",
			"Lines []Event003Line", "type Event199Kind string", "type Event199Line struct"} {
			if !strings.Contains(string(f.Content), want) {
				t.Errorf("types.acemq.go has no %q", want)
			}
		}
		return
	}
	t.Fatal("no types.acemq.go")
}
