package generator_test

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/acemq/acemq-go/generator"
)

// retry_in_broker: native reaches the generated code: the queue's
// runtime.Queue has NativeRetry and the consumer spec RequeueOnFailure
// (the broker counts each requeue), its doc says so; a queue on the rungs
// has neither.
func TestRetryInBrokerNativeIsGenerated(t *testing.T) {
	fsys := fstest.MapFS{
		"acemq.yaml": {Data: []byte(`version: 1
package: p
policies:
  steady: {fixed: {attempts: 4, delay: 45s}}
messages:
  Thing: {type: thing.v1, schema: thing.json}
queues:
  native.q: {type: quorum, retry: steady, retry_in_broker: native, consumes: [Thing]}
  rungs.q: {type: quorum, retry: steady, consumes: [Thing]}
`)},
		"thing.json": {Data: []byte(`{"type": "object"}`)},
	}
	files, err := generator.Generate(generator.Options{Manifest: "acemq.yaml", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]string{}
	for _, f := range files {
		src[f.Path] = regexp.MustCompile(`\s+`).ReplaceAllString(string(f.Content), " ")
	}
	top, cons := src["topology.acemq.go"], src["consumers.acemq.go"]
	if strings.Count(top, "NativeRetry: true") != 1 || !strings.Contains(top, `Name: "native.q", Type: runtime.Quorum, DeadLetter: true, DeliveryLimit: 50, Retry: steadyPolicy, NativeRetry: true,`) {
		t.Errorf("topology.acemq.go: want NativeRetry on native.q only:\n%s", top)
	}
	if strings.Count(cons, "RequeueOnFailure: true") != 1 || !strings.Contains(cons, "retry_in_broker: native") {
		t.Errorf("consumers.acemq.go: want RequeueOnFailure on native.q's consumer only, and its doc:\n%s", cons)
	}
}
