package schema_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/runtime"
)

// The corpus against a second implementation: Node's avsc for Avro, ajv
// for JSON Schema, both run by internal/crosscheck/check.js and installed
// there by `make crosscheck` (npm ci). Without them the cross-checks skip
// on a developer machine and fail under CI=true; under -short they skip
// without looking (the quick test needs nothing but Go).

// crosscheckDir is internal/crosscheck when node and its packages are
// installed, else "" (and a failure under CI=true); "" under -short.
func crosscheckDir(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Log("the avsc/ajv cross-check needs node: skipped under -short (the quick test)")
		return ""
	}
	dir := filepath.Join(repoRoot(t), "internal", "crosscheck")
	var missing []string
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node is not on PATH")
	}
	for _, pkg := range []string{"avsc", "ajv", "ajv-formats", "json-schema-faker"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			missing = append(missing, "node_modules/"+pkg+" is not installed")
		}
	}
	if len(missing) == 0 {
		return dir
	}
	msg := fmt.Sprintf("the avsc/ajv cross-check cannot run (%s); run make crosscheck", strings.Join(missing, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: a missing second implementation fails)", msg)
	}
	t.Log(msg + "; skipping it")
	return ""
}

// avscResult is what avsc_test.go in the corpus module wrote for a file.
type avscResult struct {
	File      string   `json:"file"`
	Error     string   `json:"error"`
	GoToAvsc  int      `json:"go_to_avsc"`
	AvscToGo  int      `json:"avsc_to_go"`
	Problems  []string `json:"problems"`
	Attempted int      `json:"attempted"`
}

func readAvscResults(t *testing.T, dir string) map[string]avscResult {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]avscResult{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var r avscResult
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out[r.File] = r
	}
	return out
}

// knownAvsc are the disagreements with avsc that are not acemq-go bugs:
// file → a text every problem (or the error) contains, and why.
var knownAvsc = map[string]struct{ contains, why string }{}

// avscOutcome judges a file's result and says it for docs/corpus.md.
func avscOutcome(t *testing.T, r avscResult, ran bool) string {
	t.Helper()
	if !ran {
		return "not checked"
	}
	known, isKnown := knownAvsc[r.File]
	var bad []string
	if r.Error != "" {
		bad = append(bad, r.Error)
	}
	bad = append(bad, r.Problems...)
	if len(bad) == 0 {
		if isKnown {
			t.Errorf("%s: avsc agrees now; remove it from knownAvsc (%s)", r.File, known.why)
		}
		return fmt.Sprintf("avsc agrees: %d/%d Go → avsc, %d/%d avsc → Go", r.GoToAvsc, r.Attempted, r.AvscToGo, r.Attempted)
	}
	for _, b := range bad {
		if !isKnown || !strings.Contains(b, known.contains) {
			t.Errorf("%s: avsc disagrees: %s", r.File, b)
		}
	}
	return fmt.Sprintf("avsc: %d/%d Go → avsc, %d/%d avsc → Go; %s: %s", r.GoToAvsc, r.Attempted, r.AvscToGo, r.Attempted, known.why, bad[0])
}

// knownAjv are the disagreements with ajv that are not acemq-go bugs:
// file → a text every disagreement contains, and why.
var knownAjv = map[string]struct{ contains, why string }{}

// ajvAnswer is check.js's answer in json mode.
type ajvAnswer struct {
	Draft          string `json:"draft"`
	Error          string `json:"error"`
	GeneratorError string `json:"generatorError"`
	Instances      []struct {
		Kind  string          `json:"kind"`
		Value json.RawMessage `json:"value"`
		Ajv   bool            `json:"ajv"`
	} `json:"instances"`
}

// ajvCheck validates, with the runtime's JSON codec and with ajv, the
// instances check.js generates for each JSON Schema corpus file (one node
// process for all), and says how they compared, file by file, for
// docs/corpus.md.
func ajvCheck(t *testing.T, dir string, files []string) map[string]string {
	t.Helper()
	texts := make([]string, len(files))
	reqs := make([]map[string]any, len(files))
	for i, file := range files {
		texts[i] = bundledSchema(t, file)
		reqs[i] = map[string]any{"schema": texts[i], "count": 6}
	}
	var answers []ajvAnswer
	if err := runCheck(dir, "json", reqs, &answers); err != nil {
		t.Fatal(err)
	}
	if len(answers) != len(files) {
		t.Fatalf("check.js answered %d of %d requests", len(answers), len(files))
	}
	out := map[string]string{}
	for i, file := range files {
		out[file] = ajvCompare(t, file, texts[i], answers[i])
	}
	return out
}

// ajvCompare validates one file's instances with the runtime's codec and
// compares the verdicts with ajv's.
func ajvCompare(t *testing.T, file, text string, ans ajvAnswer) string {
	t.Helper()
	codec, err := runtime.NewJSONCodec(text)
	if err != nil {
		t.Errorf("%s: the runtime cannot compile it: %v", file, err)
		return "the runtime cannot compile it"
	}
	known, isKnown := knownAjv[file]
	if ans.Error != "" {
		if !isKnown || !strings.Contains(ans.Error, known.contains) {
			t.Errorf("%s: %s", file, ans.Error)
		}
		return fmt.Sprintf("ajv (%s) not compared: %s", ans.Draft, ans.Error)
	}
	var valid, invalid int
	var disagree []string
	for _, in := range ans.Instances {
		var v any
		goErr := codec.Decode(context.Background(), in.Value, &v)
		var se *runtime.SchemaError
		if goErr != nil && !errors.As(goErr, &se) {
			t.Errorf("%s: %s: decode failed for another reason than the schema: %v", file, in.Kind, goErr)
		}
		goValid := goErr == nil
		if goValid != in.Ajv {
			disagree = append(disagree, fmt.Sprintf("%s %s: Go says %s, ajv says %s", in.Kind, clip(string(in.Value)), verdict(goValid, goErr), verdict(in.Ajv, nil)))
			continue
		}
		if goValid {
			valid++
		} else {
			invalid++
		}
	}
	note := ""
	if ans.GeneratorError != "" {
		note = fmt.Sprintf(" (no generated instances: %s)", clip(ans.GeneratorError))
	}
	out := fmt.Sprintf("ajv (%s) agrees on %d instances: %d valid, %d invalid%s", ans.Draft, valid+invalid, valid, invalid, note)
	if len(disagree) == 0 {
		if isKnown {
			t.Errorf("%s: ajv agrees now; remove it from knownAjv (%s)", file, known.why)
		}
		return out
	}
	for _, d := range disagree {
		if !isKnown || !strings.Contains(d, known.contains) {
			t.Errorf("%s: ajv disagrees: %s", file, d)
		}
	}
	return fmt.Sprintf("ajv (%s) agrees on %d instances, not on %d: %s; e.g. %s", ans.Draft, valid+invalid, len(disagree), known.why, disagree[0])
}

func verdict(valid bool, err error) string {
	if valid {
		return "valid"
	}
	if err != nil {
		return "invalid (" + clip(err.Error()) + ")"
	}
	return "invalid"
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// bundledSchema is the schema text the generated code holds for a corpus
// file: a manifest naming it (and its companions) is built by the model,
// which bundles what it refers to.
func bundledSchema(t *testing.T, file string) string {
	t.Helper()
	dir := t.TempDir()
	var yaml strings.Builder
	yaml.WriteString("version: 1\npackage: p\n")
	if words := corpusVocabulary[file]; len(words) > 0 {
		// The file's own keywords, as its team's manifest would list them.
		fmt.Fprintf(&yaml, "schema_vocabulary: {keywords: [%s]}\n", strings.Join(words, ", "))
	}
	yaml.WriteString("messages:\n")
	for i, f := range append([]string{file}, corpusCompanions[file]...) {
		data, err := os.ReadFile(filepath.Join(corpusDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&yaml, "  M%d: {type: m%d.v1, schema: %q}\n", i, i, filepath.Base(f))
	}
	mf, err := manifest.Parse("acemq.yaml", []byte(yaml.String()))
	if err != nil {
		t.Fatal(err)
	}
	name, err := input.Name(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Build(mf, input.OS(), name)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m.Messages[0].SchemaText
}

// runCheck runs check.js in mode with req on stdin and decodes its answer.
func runCheck(dir, mode string, req, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "check.js"), mode)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node check.js %s: %v\n%s", mode, err, stderr.String())
	}
	return json.Unmarshal(out, resp)
}
