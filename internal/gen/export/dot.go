package export

import (
	"github.com/acemq/acemq-go/internal/gen/export/templates"
	"github.com/acemq/acemq-go/internal/gen/model"
)

// DOT is m's topology as a Graphviz digraph, drawn as Mermaid draws it:
// retry rungs dashed blue with their delays, dead-letter paths red (the
// broker's own dotted), parked orange.
func DOT(m *model.Model, opts Options) ([]byte, error) {
	return templates.Execute(templates.DOT, data(m, opts))
}
