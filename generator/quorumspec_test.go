package generator_test

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/acemq/acemq-go/generator"
)

// A queue the manifest says is quorum tells the runtime so in its
// consumer's spec (Quorum: true: the broker's x-delivery-count is every
// consumer's count, whoever declared the queue), with a word in the doc
// of a requeue_on_failure consumer; a classic queue's spec says nothing
// (issue 36, item 12).
func TestQuorumQueueIsSaidInTheSpec(t *testing.T) {
	fsys := fstest.MapFS{
		"acemq.yaml": {Data: []byte(`version: 1
package: p
policies:
  steady: {fixed: {attempts: 4, delay: 45s}}
messages:
  Thing: {type: thing.v1, schema: thing.json}
queues:
  quorum.q: {type: quorum, retry: steady, requeue_on_failure: true, consumes: [Thing]}
  classic.q: {retry: steady, requeue_on_failure: true, consumes: [Thing]}
`)},
		"thing.json": {Data: []byte(`{"type": "object"}`)},
	}
	files, err := generator.Generate(generator.Options{Manifest: "acemq.yaml", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	var cons string
	for _, f := range files {
		if f.Path == "consumers.acemq.go" {
			cons = regexp.MustCompile(`\s+`).ReplaceAllString(string(f.Content), " ")
		}
	}
	if strings.Count(cons, "Quorum: true") != 1 || !strings.Contains(cons, `Queue: "quorum.q", Quorum: true,`) {
		t.Errorf("consumers.acemq.go: want Quorum: true in quorum.q's spec only:\n%s", cons)
	}
	if strings.Count(cons, "whoever declared it") != 1 {
		t.Errorf("consumers.acemq.go: want the quorum requeue consumer's doc to say the broker counts:\n%s", cons)
	}
}
