package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"acemq-gen": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar: the command as a user runs it.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:  filepath.Join("testdata", "script"),
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": exits, "modzip": modzip},
	})
}

// exits N cmd args... runs cmd like exec and fails unless it exits with
// status N: compat's 1 (incompatible) and 2 (bad input) are told apart.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// modzip ZIP MODULE@VERSION DIR writes DIR's files into ZIP as a module
// zip of a GOPROXY directory has them (each under MODULE@VERSION/), for
// the module: import's script.
func modzip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: modzip ZIP MODULE@VERSION DIR")
	}
	out, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	zw := zip.NewWriter(out)
	dir := ts.MkAbs(args[2])
	ts.Check(filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(args[1] + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}))
	ts.Check(zw.Close())
	ts.Check(out.Close())
}

const manifest = `version: 1
package: orders
messages:
  OrderPlaced: {type: order.placed.v1, schema: order.json}
queues:
  orders.new: {consumes: [OrderPlaced]}
`

// TestExitCodes pins the exit codes: 0 done or current, 1 stale, 2 a bad
// manifest or a usage error.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("acemq.yaml", manifest)
	write("order.json", `{"type": "object", "properties": {"id": {"type": "string"}}}`)
	write("bad.yaml", strings.Replace(manifest, "consumes", "consume", 1))
	f := filepath.Join(dir, "acemq.yaml")
	steps := []struct {
		args []string
		want int
	}{
		{[]string{"check", "-f", f}, 1}, // nothing generated yet
		{[]string{"-f", f}, 0},
		{[]string{"check", "-f", f}, 0},
		{[]string{"check", "-f", filepath.Join(dir, "bad.yaml")}, 2},
		{[]string{"-f", filepath.Join(dir, "bad.yaml")}, 2},
		{[]string{"-f", filepath.Join(dir, "missing.yaml")}, 2},
		{[]string{}, 2},
		{[]string{"-f", f, "extra"}, 2},
		{[]string{"-x"}, 2},
		{[]string{"-h"}, 0},
	}
	for _, s := range steps {
		var stdout, stderr bytes.Buffer
		if got := run(s.args, &stdout, &stderr); got != s.want {
			t.Errorf("acemq-gen %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), got, s.want, &stdout, &stderr)
		}
	}
}

// acemq-gen version says (devel) when built from a checkout, whether as
// the main module or as a service's tool replaced with a directory (the
// README's install; internal/installtest's payments.txtar runs it), and
// the version it was installed at otherwise.
func TestModuleVersion(t *testing.T) {
	dir := &debug.Module{Path: "/src/acemq-go"}
	for _, tc := range []struct {
		m    debug.Module
		want string
	}{
		{debug.Module{Path: "github.com/acemq/acemq-go", Version: "(devel)"}, "(devel)"},
		{debug.Module{Path: "github.com/acemq/acemq-go"}, "(devel)"},
		{debug.Module{Path: "github.com/acemq/acemq-go", Version: "v0.0.0", Replace: dir}, "(devel)"},
		{debug.Module{Path: "github.com/acemq/acemq-go", Version: "v0.0.0-00010101000000-000000000000", Replace: dir}, "(devel)"},
		{debug.Module{Path: "github.com/acemq/acemq-go", Version: "v1.2.3"}, "v1.2.3"},
		{debug.Module{Path: "github.com/acemq/acemq-go", Version: "v1.2.3", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.2.4"}}, "v1.2.4"},
	} {
		if got := moduleVersion(tc.m); got != tc.want {
			t.Errorf("moduleVersion(%+v) = %s, want %s", tc.m, got, tc.want)
		}
	}
}
