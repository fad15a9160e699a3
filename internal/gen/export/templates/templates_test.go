package templates

import (
	"strings"
	"testing"
)

// TestEscapes: a name can never end a label, a string or a table cell
// early, and a line break inside a name is shown, not obeyed.
func TestEscapes(t *testing.T) {
	name := "key */ \"q\" \\ with\nnewline | `x` <b>"
	for _, c := range []struct{ fn, got, want string }{
		{"dot", dotString(name + Line + "topic"), `"key */ \"q\" \\ with\\nnewline | ` + "`x`" + ` <b>\ntopic"`},
		{"mermaid", mermaidString(name + Line + "topic"), `"key */ #quot;q#quot; \ with\nnewline | #96;x#96; #lt;b#gt;<br/>topic"`},
		{"md", mdText(name), "key \\*/ \"q\" \\\\ with\\\\nnewline \\| \\`x\\` &lt;b&gt;"},
		{"code", mdCode(name), "``key */ \"q\" \\ with\\nnewline \\| `x` <b>``"},
		{"code backtick", mdCode("`x"), "`` `x ``"},
		{"code plain", mdCode("orders.new"), "`orders.new`"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.fn, c.got, c.want)
		}
	}
}

// TestExecute runs every template on a small topology.
func TestExecute(t *testing.T) {
	d := &Data{
		Header: "Generated.", Title: "orders",
		Graph: Graph{
			Nodes: []Node{{"q0", "orders.new", NodeQueue}, {"q0h", "Handler", NodeHandler}, {"q0dlq", "orders.new.dlq", NodeDLQ}},
			Edges: []Edge{{"q0", "q0h", "OrderPlaced", EdgeConsume}, {"q0h", "q0dlq", "gave up", EdgeDeadLetter}},
		},
		Queues: []Queue{{Name: "orders.new", Type: "classic", DLQ: "orders.new.dlq", Parked: "orders.new.parked"}},
	}
	for name, want := range map[string]string{
		DOT:      `"q0h" -> "q0dlq" [label="gave up", style=dashed, color="#dc2626"`,
		Mermaid:  "q0h -.->|\"gave up\"| q0dlq",
		Markdown: "## Queue `orders.new`",
	} {
		out, err := Execute(name, d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("%s lacks %q:\n%s", name, want, out)
		}
	}
	if _, err := Execute("nope.tmpl", d); err == nil {
		t.Error("an unknown template did not fail")
	}
}
