package installtest

import (
	"os"
	"os/exec"
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
