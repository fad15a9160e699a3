package generator

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/gentest"
	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
)

// TestJSONCheckDifferential proves the generated JSON Schema checks equal
// to the reference validator (issue 14): every JSON Schema of the corpus
// (internal/gen/schema/testdata/corpus/jsonschema) and every golden case with
// JSON messages is generated into a package of a scratch module, and one
// test binary (testdata/jsoncheck/diff_test.go there) feeds each message
// type generated instances and mutations of each; the generated check and
// the reference must agree on every document and on the location of the
// first violation; and that each message type's generated JSON encoder
// writes json.Marshal's bytes (internal/encodetest, copied in), and its one-pass decoder json.Unmarshal's value
// with the decode check's verdict (internal/decodetest, copied in). It also checks that the comparison is not vacuous: the
// golden cases' checks are generated, and see invalid documents.
func TestJSONCheckDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	var imports, calls []string
	addPkg := func(pkg, manifest, label string, msgs []string) {
		dir := filepath.Join(mod, pkg)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files, err := Generate(Options{Manifest: manifest, OutDir: dir})
		if err != nil {
			t.Logf("%s: not generated: %v", label, firstLine(err.Error()))
			return
		}
		for _, f := range files {
			if strings.HasSuffix(f.Path, "_test.go") {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, f.Path), f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		imports = append(imports, fmt.Sprintf("\t%s \"acemqdiff/%s\"", pkg, pkg))
		for _, m := range msgs {
			calls = append(calls, fmt.Sprintf("\tt.Run(%q, func(t *testing.T) { run(t, %q, %s.TypeOf%s()) })", label+" "+m, label+" "+m, pkg, m))
		}
	}
	corpus, _ := filepath.Glob(filepath.Join(root, "internal/gen/schema/testdata/corpus/jsonschema/*.json"))
	if len(corpus) < 30 {
		t.Fatalf("%d corpus JSON Schemas, want 30 or more", len(corpus))
	}
	for i, file := range corpus {
		goName := names.Default().Ident(strings.TrimSuffix(filepath.Base(file), ".json"))
		manifest := filepath.Join(mod, fmt.Sprintf("m%02d.yaml", i))
		text := fmt.Sprintf("version: 1\npackage: c%02d\nmessages:\n  %s:\n    type: diff.c%02d\n    schema: %s\n", i, goName, i, file)
		msgs := []string{goName}
		if strings.HasSuffix(file, "openlineage__ColumnLineageDatasetFacet.json") {
			text += fmt.Sprintf("  OpenLineage:\n    type: diff.c%02d.ol\n    schema: %s\n", i, filepath.Join(filepath.Dir(file), "openlineage__OpenLineage.json"))
			msgs = append(msgs, "OpenLineage")
		}
		if err := os.WriteFile(manifest, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		addPkg(fmt.Sprintf("c%02d", i), manifest, "corpus/"+filepath.Base(file), msgs)
	}
	for _, g := range []struct {
		dir  string
		msgs []string
	}{
		{"jsonschema-all", []string{"Everything"}},
		{"orders", nil},
		{"shipping", nil},
		{"names", nil},
	} {
		m, err := pipeline.Load(filepath.Join(root, "golden", g.dir, "acemq.yaml"))
		if err != nil {
			t.Fatalf("golden %s: %v", g.dir, err)
		}
		var msgs []string
		for _, msg := range m.Messages {
			if msg.Format.String() == "jsonschema" {
				msgs = append(msgs, msg.GoName)
			}
		}
		addPkg("g"+strings.ReplaceAll(g.dir, "-", ""), filepath.Join(root, "golden", g.dir, "acemq.yaml"), "golden/"+g.dir, msgs)
	}
	addPkg("edge", filepath.Join(root, "internal/gen/schema/testdata/jsoncheck/acemq.yaml"), "jsoncheck/edge", []string{"Edge"})
	harness, err := os.ReadFile(filepath.Join(root, "internal/gen/schema/testdata/jsoncheck/diff_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	encodetest, err := os.ReadFile(filepath.Join(root, "internal/encodetest/encodetest.go"))
	if err != nil {
		t.Fatal(err)
	}
	encodetest = bytes.Replace(encodetest, []byte("\npackage encodetest\n"), []byte("\npackage diffall\n"), 1)
	decodetest, err := os.ReadFile(filepath.Join(root, "internal/decodetest/decodetest.go"))
	if err != nil {
		t.Fatal(err)
	}
	decodetest = bytes.Replace(decodetest, []byte("\npackage decodetest\n"), []byte("\npackage diffall\n"), 1)
	cases := "package diffall\n\nimport (\n\t\"testing\"\n\n" + strings.Join(imports, "\n") + "\n)\n\nfunc TestDifferential(t *testing.T) {\n" + strings.Join(calls, "\n") + "\n}\n"
	writeScratch(t, root, mod, map[string]string{"diffall/diff_test.go": string(harness), "diffall/cases_test.go": cases,
		"diffall/encodetest_test.go": string(encodetest), "diffall/decodetest_test.go": string(decodetest)})
	out := filepath.Join(t.TempDir(), "tally.tsv")
	vet := exec.Command("go", "vet", "./...")
	vet.Dir = mod
	vet.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	if b, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the generated packages: %v\n%s", err, b)
	}
	cmd := exec.Command("go", "test", "-count=1", "-timeout=4m", "-v", "./diffall")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "ACEMQ_DIFF_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the differential test failed: %v\n%s", err, b)
	}
	checkTally(t, out)
}

// checkTally logs what was compared and asserts the golden checks ran.
func checkTally(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var checked, fallback, compared, invalid, decoders, took int
	seen := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if n, _ := strconv.Atoi(cols[1]); n >= 0 {
			seen += sc.Text() + "\n"
		}
		n := make([]int, len(cols))
		for i := 1; i < len(cols); i++ {
			n[i], _ = strconv.Atoi(cols[i])
		}
		if strings.HasSuffix(cols[0], " (one-pass decode)") {
			if n[1] >= 0 {
				decoders++
				took += n[3]
				t.Logf("%s: the decoder took %d of %d documents and mutations", cols[0], n[3], n[1])
			}
			continue
		}
		decode := strings.HasSuffix(cols[0], " (decode)")
		if n[1] < 0 {
			if !decode {
				fallback++
			}
			t.Logf("%s: no generated check (the reference validates it)", cols[0])
			continue
		}
		if !decode {
			checked++
		}
		compared += n[3]
		invalid += n[5]
		t.Logf("%s: %d documents, %d not Go values, %d compared (%d valid, %d invalid), %d undecided", cols[0], n[1], n[2], n[3], n[4], n[5], n[6])
		if (strings.HasPrefix(cols[0], "golden/jsonschema-all") || strings.HasPrefix(cols[0], "jsoncheck/edge")) && (n[4] == 0 || n[5] < 10) {
			t.Errorf("%s: the comparison is too thin: %d valid, %d invalid", cols[0], n[4], n[5])
		}
	}
	t.Logf("%d message types with a generated check, %d left to the reference; %d comparisons (encode and decode), %d of them of invalid documents", checked, fallback, compared, invalid)
	if checked == 0 || invalid == 0 {
		t.Errorf("nothing was compared")
	}
	t.Logf("%d message types with a one-pass decoder, which took %d documents", decoders, took)
	if decoders == 0 || took == 0 {
		t.Errorf("no one-pass decoder took a document")
	}
	for _, must := range []string{"golden/jsonschema-all Everything", "jsoncheck/edge Edge"} {
		if !strings.Contains(seen, must+"\t") || !strings.Contains(seen, must+" (decode)\t") {
			t.Errorf("%s: no generated check was compared, encode and decode", must)
		}
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// writeScratch writes files and a go.mod using this repository into mod.
func writeScratch(t *testing.T, root, mod string, files map[string]string) {
	files["go.mod"] = "module acemqdiff\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/acemq/acemq-go v0.0.0\n\tgithub.com/acemq/acemq-go/runtime v0.0.0\n)\n\n" + gentest.Replaces(root)
	files["go.sum"] = gentest.Sums(t, root)
	for name, content := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
