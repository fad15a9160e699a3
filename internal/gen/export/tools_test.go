package export

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// npmDir is where make tools (scripts/artifact-tools.sh) runs npm ci.
const npmDir = "testdata/node"

// missing fails the test under CI=true, where everything a test needs is
// installed by the project's own files, and skips it elsewhere (and under
// -short, even with CI=true: the quick test needs nothing but Go).
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if testing.Short() {
		t.Skipf(format+" (skipped under -short)", args...)
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: a missing tool fails; make tools installs it)", args...)
	}
	t.Skipf(format+" (make tools installs it)", args...)
}

// runsTool skips the test under -short: it starts node or Graphviz, which
// the broker-free quick test does without.
func runsTool(t *testing.T, tool string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("runs %s: skipped under -short (the quick test needs nothing but Go)", tool)
	}
}

// exampleNames are the files the examples' exports: write.
var exampleNames = map[string]string{"asyncapi": "asyncapi.json", "dot": "topology.dot", "mermaid": "topology.mmd"}

// goldenFiles are the golden exports of format, one per case, and the
// examples' exports of it.
func goldenFiles(t *testing.T, format string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../../../golden/*/exports", goldenNames[format]))
	if err != nil || len(files) < 5 {
		t.Fatalf("golden %s exports: %v %v", format, files, err)
	}
	examples, err := filepath.Glob(filepath.Join("../../../examples/*", exampleNames[format]))
	if err != nil || len(examples) == 0 {
		t.Fatalf("the examples export no %s: %v %v", format, examples, err)
	}
	return append(files, examples...)
}

// TestAsyncAPISchema validates every golden AsyncAPI document against the
// official AsyncAPI 3.0.0 JSON Schema of npm's @asyncapi/specs.
func TestAsyncAPISchema(t *testing.T) {
	specPath := filepath.Join(npmDir, "node_modules", "@asyncapi", "specs", "schemas", "3.0.0.json")
	spec, err := os.Open(specPath)
	if err != nil {
		missing(t, "the AsyncAPI 3.0.0 JSON Schema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(spec)
	spec.Close()
	if err != nil {
		t.Fatalf("%s: %v", specPath, err)
	}
	c := jsonschema.NewCompiler()
	const url = "http://asyncapi.com/definitions/3.0.0/asyncapi.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile the AsyncAPI 3.0.0 schema: %v", err)
	}
	for _, path := range goldenFiles(t, "asyncapi") {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s is not a valid AsyncAPI 3.0.0 document: %v", path, err)
		}
	}
	// The schema does refuse: a send without a channel is no document.
	if sch.Validate(map[string]any{"asyncapi": "3.0.0", "info": map[string]any{"title": "x", "version": "1"},
		"operations": map[string]any{"o": map[string]any{"action": "send"}}}) == nil {
		t.Error("an operation with no channel validated")
	}
}

// TestAsyncAPIParser parses every golden AsyncAPI document with the
// official @asyncapi/parser (testdata/node/asyncapi.mjs) and wants no
// error diagnostic.
func TestAsyncAPIParser(t *testing.T) {
	runsTool(t, "node")
	t.Parallel() // node and the parser take seconds to start
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node: %v", err)
	}
	if _, err := os.Stat(filepath.Join(npmDir, "node_modules", "@asyncapi", "parser")); err != nil {
		missing(t, "@asyncapi/parser: %v", err)
	}
	files := goldenFiles(t, "asyncapi")
	var args []string
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		args = append(args, abs)
	}
	cmd := exec.Command(node, append([]string{"asyncapi.mjs"}, args...)...)
	cmd.Dir = npmDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("@asyncapi/parser: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), ": ok: "); n != len(files) {
		t.Errorf("%d of %d documents parsed:\n%s", n, len(files), out)
	}
	if strings.Contains(string(out), ": error: ") {
		t.Errorf("the parser reported errors:\n%s", out)
	}
}

// TestMermaidParses parses every golden Mermaid export with Mermaid's own
// parser (testdata/node/mermaid.mjs: mermaid.parse on a jsdom window).
func TestMermaidParses(t *testing.T) {
	runsTool(t, "node")
	t.Parallel() // node and mermaid take seconds to start
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node: %v", err)
	}
	if _, err := os.Stat(filepath.Join(npmDir, "node_modules", "mermaid")); err != nil {
		missing(t, "mermaid: %v", err)
	}
	files := goldenFiles(t, "mermaid")
	var args []string
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		args = append(args, abs)
	}
	cmd := exec.Command(node, append([]string{"mermaid.mjs"}, args...)...)
	cmd.Dir = npmDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mermaid.parse: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), ": ok flowchart"); n != len(files) {
		t.Errorf("%d of %d diagrams parsed as flowcharts:\n%s", n, len(files), out)
	}
}

// TestDOTRenders renders every golden DOT export to PNG with Graphviz:
// dot refuses a file that is not valid DOT.
func TestDOTRenders(t *testing.T) {
	runsTool(t, "Graphviz")
	dot, err := exec.LookPath("dot")
	if err != nil {
		missing(t, "Graphviz's dot: %v", err)
	}
	for _, path := range goldenFiles(t, "dot") {
		var stderr bytes.Buffer
		cmd := exec.Command(dot, "-Tpng", path)
		cmd.Stderr = &stderr
		png, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("dot -Tpng %s: %v\n%s", path, err, &stderr)
			continue
		}
		if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
			t.Errorf("dot -Tpng %s: not a PNG (%d bytes)", path, len(png))
		}
	}
}

// TestAsyncAPIContent checks the orders case's document says what the
// issue asks: channels per queue and exchange with AMQP bindings, a send
// per publisher message, a receive per consumer, Avro through schemaFormat,
// JSON Schema inline, the acemq headers.
func TestAsyncAPIContent(t *testing.T) {
	var doc struct {
		Channels map[string]struct {
			Address  string
			Messages map[string]any
			Bindings struct{ AMQP struct{ Is string } }
		}
		Operations map[string]struct {
			Action  string
			Channel struct {
				Ref string `json:"$ref"`
			}
			Bindings struct {
				AMQP struct {
					CC        []string
					Mandatory bool
					Ack       bool
				}
			}
		}
		Components struct {
			Messages map[string]struct {
				ContentType string
				Payload     map[string]any
				Headers     struct {
					Ref string `json:"$ref"`
				}
			}
			Schemas map[string]struct{ Properties map[string]any }
		}
	}
	data, err := os.ReadFile("../../../golden/orders/exports/asyncapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	wantChannels := map[string]string{
		"exchange.golden.orders": "routingKey", "exchange.acemq.dlx": "routingKey", "exchange.acemq.retry": "routingKey",
		"queue.golden.orders.new": "queue", "queue.golden.orders.new.dlq": "queue", "queue.golden.orders.new.parked": "queue",
		"queue.golden.orders.new.retry.10s": "queue", "queue.golden.orders.new.retry.20s": "queue",
		"queue.golden.orders.new.retry.40s": "queue", "queue.golden.orders.new.retry.80s": "queue", "queue.golden.orders.new.retry.160s": "queue",
	}
	if len(doc.Channels) != len(wantChannels) {
		t.Errorf("%d channels, want %d", len(doc.Channels), len(wantChannels))
	}
	for id, is := range wantChannels {
		ch, ok := doc.Channels[id]
		if !ok || ch.Bindings.AMQP.Is != is {
			t.Errorf("channel %s: %+v, want amqp is %s", id, ch, is)
		}
	}
	if n := len(doc.Channels["queue.golden.orders.new.dlq"].Messages); n != 2 {
		t.Errorf("the dead-letter queue carries %d messages, want 2", n)
	}
	send := doc.Operations["OrdersPublisher.PublishOrderPlaced"]
	if send.Action != "send" || send.Channel.Ref != "#/channels/exchange.golden.orders" || len(send.Bindings.AMQP.CC) != 1 || send.Bindings.AMQP.CC[0] != "order.created" || !send.Bindings.AMQP.Mandatory {
		t.Errorf("send operation: %+v", send)
	}
	recv := doc.Operations["ConsumeOrdersNew"]
	if recv.Action != "receive" || recv.Channel.Ref != "#/channels/queue.golden.orders.new" || !recv.Bindings.AMQP.Ack {
		t.Errorf("receive operation: %+v", recv)
	}
	placed, cancelled := doc.Components.Messages["OrderPlaced"], doc.Components.Messages["OrderCancelled"]
	if placed.Payload["schemaFormat"] != AvroSchemaFormat || placed.ContentType != "application/vnd.apache.avro+binary" {
		t.Errorf("OrderPlaced payload: %v", placed.Payload)
	}
	if cancelled.Payload["type"] != "object" || cancelled.ContentType != "application/json" {
		t.Errorf("OrderCancelled payload is not its JSON Schema inline: %v", cancelled.Payload)
	}
	if placed.Headers.Ref != "#/components/schemas/AcemqHeaders" {
		t.Errorf("headers: %+v", placed.Headers)
	}
	for _, h := range []string{"x-acemq-id", "x-acemq-attempt", "x-acemq-first-seen", "x-acemq-origin", "x-acemq-error", "x-acemq-queue"} {
		if doc.Components.Schemas["AcemqHeaders"].Properties[h] == nil {
			t.Errorf("AcemqHeaders has no %s", h)
		}
	}
}
