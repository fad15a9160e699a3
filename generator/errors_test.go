package generator_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/generator"
)

// The library's errors carry no "acemq-gen:" prefix: that is the
// command's to add.
func TestErrorsHaveNoCommandPrefix(t *testing.T) {
	_, err := generator.Generate(generator.Options{Manifest: "testdata/does-not-exist.yaml"})
	if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "acemq-gen") {
		t.Errorf("Generate of a missing manifest = %v; want fs.ErrNotExist without the acemq-gen: prefix", err)
	}
	res, err := generator.Run(generator.Options{Manifest: "../golden/orders/acemq.yaml", OutDir: "../golden/orders/want"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 2 || res.Queues != 1 || res.Publishers != 1 || len(res.Files) < 6 {
		t.Errorf("Run = %d messages, %d queues, %d publishers, %d files; want 2, 1, 1, at least 6", res.Messages, res.Queues, res.Publishers, len(res.Files))
	}
}
