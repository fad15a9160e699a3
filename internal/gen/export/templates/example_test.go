package templates_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/export/templates"
)

// Execute runs a template on the data the export stage builds; names are
// escaped for the language (a quote in a label cannot end it).
func ExampleExecute() {
	d := &templates.Data{
		Header: "Generated.",
		Title:  "demo",
		Graph: templates.Graph{
			Nodes: []templates.Node{
				{ID: "q0", Label: `say "hi"` + templates.Line + "classic", Kind: templates.NodeQueue},
				{ID: "q0h", Label: "Handler", Kind: templates.NodeHandler},
			},
			Edges: []templates.Edge{{From: "q0", To: "q0h", Label: "Hello", Kind: templates.EdgeConsume}},
		},
	}
	out, err := templates.Execute(templates.Mermaid, d)
	if err != nil {
		log.Fatal(err)
	}
	lines := strings.SplitAfter(string(out), "\n")
	fmt.Print(strings.Join(lines[:5], ""))
	// Output:
	// %% Generated.
	// flowchart LR
	//   q0[("say #quot;hi#quot;<br/>classic")]:::queue
	//   q0h[["Handler"]]:::handler
	//   q0 ==>|"Hello"| q0h
}
