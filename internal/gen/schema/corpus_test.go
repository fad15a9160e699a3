package schema_test

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/internal/gen/schema"
)

var update = flag.Bool("update", false, "rewrite docs/corpus.md from the corpus outcomes")

// corpusDir holds a byte-for-byte copy of /work/shared/corpus (see its
// README.md and SOURCES.md).
const corpusDir = "testdata/corpus"

// corpusCompanions are documents loaded beside a corpus file because it
// refers to them by $id (as a manifest naming both would).
// corpusVocabulary are the keywords of their own that corpus files use,
// as a manifest's schema_vocabulary would list them.
var corpusVocabulary = map[string][]string{
	"jsonschema/schemastore__ninjs-2.0.json": {"name"},
}

var corpusCompanions = map[string][]string{
	"jsonschema/openlineage__ColumnLineageDatasetFacet.json": {"jsonschema/openlineage__OpenLineage.json"},
}

type corpusOutcome struct {
	file    string
	types   int
	refusal string
	second  string // what the second implementation (avsc, ajv) said
}

// TestCorpus generates every corpus schema as a message type, one package
// per file, and builds and vets them all with one go build and one go vet;
// then one test binary round-trips random values of every Avro type.
// Every file must compile and vet, or be refused with *Errors naming the
// file, a schema path and a construct. It also keeps docs/corpus.md
// current (-update rewrites it).
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	var outcomes []corpusOutcome
	pkgs := map[string]string{}
	var cases []corpusCase
	for i, file := range files {
		u, err := buildCorpusFile(t, file)
		oc := corpusOutcome{file: file}
		if err != nil {
			oc.refusal = checkRefusal(t, file, err)
			outcomes = append(outcomes, oc)
			continue
		}
		pkg := fmt.Sprintf("c%02d", i)
		src, err := render(pkg, u)
		if err != nil {
			t.Errorf("%s: rendering failed: %v", file, err)
			continue
		}
		checkNoAny(t, file, checkSource(t, src))
		pkgs[filepath.Join(pkg, "types.go")] = "// Generated from " + file + "\n\n" + src
		oc.types = len(u.Types)
		if strings.HasSuffix(file, ".avsc") {
			data, _ := os.ReadFile(filepath.Join(corpusDir, file))
			root := u.Roots[names.Default().Ident(strings.TrimSuffix(filepath.Base(file), ".avsc"))]
			cases = append(cases, corpusCase{file: file, pkg: pkg, root: root.Name, text: string(data)})
		}
		outcomes = append(outcomes, oc)
	}
	rt, err := os.ReadFile("testdata/corpusrt/roundtrip_test.go")
	if err != nil {
		t.Fatal(err)
	}
	pkgs["rtall/roundtrip_test.go"] = string(rt)
	avscTest, err := os.ReadFile("testdata/corpusrt/avsc_test.go")
	if err != nil {
		t.Fatal(err)
	}
	pkgs["rtall/avsc_test.go"] = string(avscTest)
	pkgs["rtall/cases_test.go"] = corpusCases(cases)
	cross := crosscheckDir(t)
	avscOut := t.TempDir()
	if cross != "" {
		t.Setenv("ACEMQ_CROSSCHECK_DIR", cross)
		t.Setenv("ACEMQ_CROSSCHECK_OUT", avscOut)
	}
	dir := writeModule(t, pkgs)
	if keep := os.Getenv("ACEMQ_CORPUS_KEEP"); keep != "" {
		t.Logf("corpus module kept in %s", keep)
		_ = os.CopyFS(keep, os.DirFS(dir))
	}
	if out, err := goCmd(dir, "build", "./..."); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if testing.Short() {
		// The quick test (make quick) stops at a corpus that builds: vet,
		// the round trip and the cross-check (which -short leaves out
		// already) run in make test.
		t.Log("-short: the corpus builds; go vet and the Avro round trip run without -short")
		return
	}
	if out, err := goCmd(dir, "vet", "./..."); err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
	// Every Avro type round-trips random values through hamba/avro (with a
	// configuration of its own, as the runtime's) and through JSON.
	if out, err := goCmd(dir, "test", "-count=1", "./rtall"); err != nil {
		t.Fatalf("Avro corpus round trip: %v\n%s", err, out)
	}
	// The second implementations: avsc's results were written by the
	// corpus module's TestCorpusAvsc; ajv runs here, on the schema text
	// the generated code holds.
	results := map[string]avscResult{}
	if cross != "" {
		results = readAvscResults(t, avscOut)
	}
	var jsonFiles []string
	for _, o := range outcomes {
		if o.refusal == "" && strings.HasSuffix(o.file, ".json") {
			jsonFiles = append(jsonFiles, o.file)
		}
	}
	ajv := map[string]string{}
	if cross != "" {
		ajv = ajvCheck(t, cross, jsonFiles)
	}
	for i, o := range outcomes {
		switch {
		case o.refusal != "":
		case cross == "":
			outcomes[i].second = "not checked"
		case strings.HasSuffix(o.file, ".avsc"):
			r, ok := results[o.file]
			if !ok {
				t.Errorf("%s: no avsc result", o.file)
			}
			outcomes[i].second = avscOutcome(t, r, ok)
		default:
			outcomes[i].second = ajv[o.file]
		}
	}
	if cross == "" {
		t.Log("docs/corpus.md not compared: the cross-check did not run")
		return
	}
	checkCorpusDoc(t, outcomes)
}

// corpusCase is an Avro corpus file whose types are round-tripped.
type corpusCase struct{ file, pkg, root, text string }

// corpusCases writes the test that round-trips every Avro corpus type.
func corpusCases(cases []corpusCase) string {
	var b strings.Builder
	b.WriteString("package rtall\n\nimport (\n\t\"testing\"\n\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "\t%s \"acemqgentest/%s\"\n", c.pkg, c.pkg)
	}
	b.WriteString(")\n\nfunc TestCorpusRoundTrip(t *testing.T) {\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "\tt.Run(%q, func(t *testing.T) { roundTrip[%s.%s](t, %s) })\n", c.file, c.pkg, c.root, strconv.Quote(c.text))
	}
	b.WriteString("}\n\nfunc TestCorpusAvsc(t *testing.T) {\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "\tt.Run(%q, func(t *testing.T) { avscCheck[%s.%s](t, %q, %s) })\n", c.file, c.pkg, c.root, c.file, strconv.Quote(c.text))
	}
	b.WriteString("}\n")
	return b.String()
}

func corpusFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"avro/*.avsc", "jsonschema/*.json"} {
		m, err := filepath.Glob(filepath.Join(corpusDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(corpusDir, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	if len(files) != 73 {
		t.Fatalf("corpus has %d files, want 73", len(files))
	}
	return files
}

// buildCorpusFile maps one file (and its companions), failing the test on
// a panic or if it takes more than 10s.
func buildCorpusFile(t *testing.T, file string) (*schema.Universe, error) {
	t.Helper()
	var inputs []schema.Input
	for _, f := range append([]string{file}, corpusCompanions[file]...) {
		data, err := os.ReadFile(filepath.Join(corpusDir, f))
		if err != nil {
			t.Fatal(err)
		}
		format := schema.Avro
		if strings.HasSuffix(f, ".json") {
			format = schema.JSONSchema
		}
		name := names.Default().Ident(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
		inputs = append(inputs, schema.Input{Message: name, GoName: name, Path: f, Dir: filepath.Dir(filepath.Join(corpusDir, f)), Data: data, Format: format})
	}
	type result struct {
		u   *schema.Universe
		err error
		pan any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{pan: p}
			}
		}()
		u, err := schema.Build(inputs, nil, schema.WithJSONVocabulary(corpusVocabulary[file], nil))
		done <- result{u: u, err: err}
	}()
	select {
	case r := <-done:
		if r.pan != nil {
			t.Fatalf("%s: Build panicked: %v", file, r.pan)
		}
		return r.u, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: Build did not return within 10s", file)
	}
	return nil, nil
}

// checkRefusal asserts every error is an *Error naming the file, a schema
// path and a construct, and returns the refusal text.
func checkRefusal(t *testing.T, file string, err error) string {
	t.Helper()
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var lines []string
	for _, e := range errs {
		var se *schema.Error
		if !errors.As(e, &se) {
			t.Errorf("%s: error is not a *schema.Error: %v", file, e)
			continue
		}
		if se.Path == "" || se.Pointer == "" || se.Construct == "" || se.Msg == "" {
			t.Errorf("%s: incomplete error %#v", file, se)
		}
		if !strings.HasPrefix(se.Path, strings.SplitN(file, "/", 2)[0]) {
			t.Errorf("%s: error names path %q", file, se.Path)
		}
		lines = append(lines, fmt.Sprintf("%s (%s)", se.Error(), se.Construct))
	}
	return strings.Join(lines, "; ")
}

const corpusDocPath = "../../../docs/corpus.md"

func checkCorpusDoc(t *testing.T, outcomes []corpusOutcome) {
	t.Helper()
	doc := corpusDoc(outcomes)
	if *update {
		if err := os.WriteFile(corpusDocPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(corpusDocPath)
	if err != nil || string(have) != doc {
		t.Errorf("docs/corpus.md is stale; run: go test ./internal/gen/schema -run Corpus -update")
	}
}

func corpusDoc(outcomes []corpusOutcome) string {
	var ok, refused int
	var b strings.Builder
	for _, o := range outcomes {
		if o.refusal == "" {
			ok++
		} else {
			refused++
		}
	}
	fmt.Fprintf(&b, "# Schema corpus outcomes\n\n")
	fmt.Fprintf(&b, "Written by `go test ./internal/gen/schema -run Corpus -update` (after `make crosscheck`); `TestGoldenCorpusDoc` (part of `make generated-check`) and `TestCorpus` fail when this file is stale.\n")
	fmt.Fprintf(&b, "Each of the %d files in `internal/gen/schema/testdata/corpus` (a copy of the shared corpus; see its README.md and SOURCES.md) is generated as one message type into its own package; all packages are then compiled with one `go build ./...` and checked with one `go vet ./...`. The Go type of every Avro file that maps also round-trips 8 random values of its schema through hamba/avro (a configuration of its own, as the runtime's) and through encoding/json.\n\n", len(outcomes))
	fmt.Fprintf(&b, "**%d compile and vet, %d refused.**\n\n", ok, refused)
	for _, comp := range slices.Sorted(maps.Keys(corpusCompanions)) {
		with := corpusCompanions[comp]
		fmt.Fprintf(&b, "`%s` is built together with %s, as a manifest naming both would: it refers to it by `$id`.\n\n", comp, "`"+strings.Join(with, "`, `")+"`")
	}
	fmt.Fprintf(&b, "## Against a second implementation\n\n")
	fmt.Fprintf(&b, "Each Avro file that maps is also checked against Node's avsc (`internal/crosscheck`, installed by `make crosscheck`): %d values the generated Go encodes (random values of the schema, decoded into the generated type and encoded from it) must be decoded by avsc to an equal value and re-encoded by avsc to the same bytes, and %d values of avsc's `Type.random()` (each map cut to one entry, so that byte order is defined) must be decoded by the generated Go and re-encoded to the same bytes. Values are compared in a neutral form: longs as decimal strings, floats by their IEEE bits, bytes and fixed as hex, decimals by their unscaled integer, unions by branch index; other logical types by their Avro value. avsc reads longs as BigInt and decimals through a logical type of the test's own (it has none built in). The runtime writes each array and map block as avsc and the Java reference do, with a count only (hamba's `DisableBlockSizeHeader`), and the Go re-encodings compared with avsc's bytes are made that way; the Go → avsc values above are encoded with hamba's default instead, a negative count and the block's byte size, a form the Avro specification allows and avsc reads too. Some decoders do not read the sized form ([hamba/avro#264](https://github.com/hamba/avro/issues/264): BigQuery; [beam-community/avro_ex#106](https://github.com/beam-community/avro_ex/pull/106): Elixir's avro_ex on maps).\n\n", 8, 8)
	fmt.Fprintf(&b, "Each JSON Schema file that maps is validated, as the generated code holds it (bundled by the model), by the runtime's validator (santhosh-tekuri/jsonschema, formats asserted) and by ajv (the draft its `$schema` names, 2020-12 when none, as the runtime; ajv-formats for formats) on the same instances: eight fixed ones (`{}`, `[]`, `\"\"`, `0`, `1.5`, `true`, `null`, an object with an unknown property), six that json-schema-faker generates from the schema (and, when one breaks the schema, a copy repaired where ajv's errors point: an additional property removed, an enum's first value, a value inside a bound, a sample of a format; json-schema-faker ignores additionalProperties inside oneOf, exclusive bounds and some formats), and mutations of each (of the repaired copy when there is one) meant to break it (the root or a property of another type, a property removed, an unknown property added, the same one level down). The verdicts must agree.\n\n")
	fmt.Fprintf(&b, "A disagreement fails the test unless it is listed, with its reason, in `knownAvsc` or `knownAjv` (`internal/gen/schema/crosscheck_test.go`); a listed one that no longer happens fails it too.\n\n")
	fmt.Fprintf(&b, "| file | outcome | second implementation |\n| --- | --- | --- |\n")
	for _, o := range outcomes {
		out := fmt.Sprintf("ok: %d Go types", o.types)
		if o.refusal != "" {
			out = "refused: " + strings.ReplaceAll(o.refusal, "|", "\\|")
		}
		second := o.second
		if o.refusal != "" {
			second = "—"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", o.file, out, strings.ReplaceAll(strings.ReplaceAll(second, "|", "\\|"), "\n", " "))
	}
	return b.String()
}
