package installtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// goEnv is one variable of `go env`.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// TestInstallSteps runs testdata/*.txtar: each is a scratch service outside
// the repository that follows README.md's install steps word for word, with
// $REPO standing for the checkout.
func TestInstallSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the install steps build a service with the go command")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/acemq/acemq-go").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(out))
	cache, modcache, proxy := goEnv(t, "GOCACHE"), goEnv(t, "GOMODCACHE"), goEnv(t, "GOPROXY")
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			env.Setenv("GOCACHE", cache)
			env.Setenv("GOMODCACHE", modcache)
			env.Setenv("GOPROXY", proxy)
			env.Setenv("GOWORK", "off") // a service has no go.work of ours
			env.Setenv("GOTOOLCHAIN", "local")
			env.Setenv("PATH", os.Getenv("PATH"))
			return nil
		},
	})
}

// TestReadmeStepsAreTheScripts: every command of README.md's "Install"
// block is a step of each script in testdata, word for word, so that the
// README cannot drift from what TestInstallSteps runs.
func TestReadmeStepsAreTheScripts(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	steps := installBlock(t, string(readme))
	scripts, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in testdata (%v)", err)
	}
	for _, script := range scripts {
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			lines[strings.TrimSpace(l)] = true
		}
		for _, step := range steps {
			if !lines["exec "+step] {
				t.Errorf("%s: no step `exec %s` (README.md's Install says it)", script, step)
			}
		}
	}
}

// installBlock is the commands of the first sh block under README.md's
// "## Install".
func installBlock(t *testing.T, readme string) []string {
	t.Helper()
	_, after, ok := strings.Cut(readme, "\n## Install\n")
	if !ok {
		t.Fatal(`README.md has no "## Install" section`)
	}
	_, after, ok = strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal(`README.md's Install has no sh block`)
	}
	block, _, _ := strings.Cut(after, "```")
	var steps []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			steps = append(steps, l)
		}
	}
	if len(steps) == 0 {
		t.Fatal("README.md's Install block is empty")
	}
	return steps
}
