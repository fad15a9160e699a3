package export

import (
	"github.com/acemq/acemq-go/internal/gen/export/templates"
	"github.com/acemq/acemq-go/internal/gen/model"
)

// Markdown is a summary of m's topology for a reviewer: the publishers,
// the exchanges, and for each queue what it consumes, its policy's
// schedule, which waits the broker holds and where failures go.
func Markdown(m *model.Model, opts Options) ([]byte, error) {
	return templates.Execute(templates.Markdown, data(m, opts))
}
