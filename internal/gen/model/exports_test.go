package model

import (
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

const exportsBase = `version: 1
package: p
exports:
`

func TestExports(t *testing.T) {
	m, err := build(t, exportsBase+`  - {format: asyncapi, path: docs/./asyncapi.json}
  - {format: definitions, path: definitions.json, vhost: orders}
  - {format: markdown, path: ../TOPOLOGY.md}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Export{{"asyncapi", "docs/asyncapi.json", ""}, {"definitions", "definitions.json", "orders"}, {"markdown", "../TOPOLOGY.md", ""}}
	if len(m.Exports) != len(want) {
		t.Fatalf("exports %v", m.Exports)
	}
	for i, x := range m.Exports {
		if *x != want[i] {
			t.Errorf("exports[%d] = %+v, want %+v", i, *x, want[i])
		}
	}
}

func TestExportErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`  - {format: pdf, path: a.pdf}`, `acemq.yaml:4:`},
		{`  - {format: dot, path: /tmp/t.dot}`, `acemq.yaml:4:25: exports: dot: path "/tmp/t.dot" is absolute; write it relative to the manifest's directory`},
		{`  - {format: dot, path: topology.go}`, `acemq.yaml:4:25: exports: dot: path "topology.go" ends in .go; an artifact is not Go code (name it topology.dot)`},
		{"  - {format: dot, path: t.dot}\n  - {format: mermaid, path: ./t.dot}", `acemq.yaml:5:29: exports: mermaid: path "./t.dot" is written by another entry of exports:; give each its own file`},
		{`  - {format: dot, path: t.dot, vhost: x}`, `acemq.yaml:4:39: exports: dot: vhost applies to formats definitions and asyncapi only (the vhost they name); remove it`},
		{`  - {format: dot}`, `acemq.yaml:4:`},
	} {
		f, perr := manifest.Parse("acemq.yaml", []byte(exportsBase+c.src+"\n"))
		var err error = perr
		if f != nil && perr == nil {
			_, err = buildDir(t, f, t.TempDir())
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.src, err, c.want)
		}
	}
}
