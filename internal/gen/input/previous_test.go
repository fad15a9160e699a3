package input_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/compat"
	"github.com/acemq/acemq-go/internal/gen/input"
)

// --against git:REF reads the commit's version of every file of the
// manifest's directory, a schema: given as an absolute path included
// (before, that one was read from the working tree).
func TestLoadPreviousGitReadsTheCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed")
	}
	repo := t.TempDir()
	schema := filepath.Join(repo, "svc", "schemas", "a.json")
	manifest := filepath.Join(repo, "svc", "acemq.yaml")
	write(t, schema, `{"type": "object", "properties": {"v1": {"type": "string"}}}`)
	write(t, manifest, "version: 1\npackage: p\nmessages:\n  A: {type: a, schema: \""+filepath.ToSlash(schema)+"\"}\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "v1"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
	write(t, schema, `{"type": "object", "properties": {"v2": {"type": "string"}}}`)
	prevSet, err := input.LoadPrevious(manifest, "git:HEAD")
	if err != nil {
		t.Fatal(err)
	}
	prev, err := compat.Build(prevSet)
	if err != nil {
		t.Fatal(err)
	}
	if text := prev.Messages[0].SchemaText; !strings.Contains(text, `"v1"`) {
		t.Errorf("the previous schema is the working tree's:\n%s", text)
	}
	curSet, err := input.LoadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := compat.Build(curSet)
	if err != nil {
		t.Fatal(err)
	}
	if text := cur.Messages[0].SchemaText; !strings.Contains(text, `"v2"`) {
		t.Errorf("the current schema is not the working tree's:\n%s", text)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
