package export

import (
	"github.com/acemq/acemq-go/internal/gen/export/templates"
	"github.com/acemq/acemq-go/internal/gen/model"
)

// Mermaid is m's topology as a Mermaid flowchart: publishers → exchanges
// → queues → handlers, with the retry (blue), dead-letter (red) and
// parked (orange) paths dashed and labelled.
func Mermaid(m *model.Model, opts Options) ([]byte, error) {
	return templates.Execute(templates.Mermaid, data(m, opts))
}
