package schema_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// docs/corpus.md matches what the corpus maps to now: each file's outcome
// (its Go types, or its refusal, names and texts as the mapper writes
// them today) is computed here, without the go build, the round trips and
// the second implementations of TestCorpus (which needs node); the second
// implementation's column is read back from the file. Named TestGolden... so
// that make generated-check runs it: a change of the mapper that changes
// the report fails until it is rewritten (go test ./internal/gen/schema -run
// Corpus -update, with make crosscheck done).
func TestGoldenCorpusDoc(t *testing.T) {
	if *update {
		t.Skip("TestCorpus rewrites docs/corpus.md")
	}
	have, err := os.ReadFile(corpusDocPath)
	if err != nil {
		t.Fatal(err)
	}
	second := corpusDocSeconds(string(have))
	var outcomes []corpusOutcome
	for _, file := range corpusFiles(t) {
		o := corpusOutcome{file: file, second: second[file]}
		u, err := buildCorpusFile(t, file)
		if err != nil {
			o.refusal = checkRefusal(t, file, err)
		} else {
			o.types = len(u.Types)
		}
		outcomes = append(outcomes, o)
	}
	if doc := corpusDoc(outcomes); doc != string(have) {
		t.Errorf("docs/corpus.md is stale; run: make crosscheck && go test ./internal/gen/schema -run Corpus -update\n%s", firstDiff(string(have), doc))
	}
}

// corpusDocSeconds reads the third column of each row of the report's
// table, by file, as corpusDoc wrote it (| unescaped).
func corpusDocSeconds(doc string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `") || !strings.HasSuffix(line, " |") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
		if len(cells) != 3 {
			continue
		}
		out[strings.Trim(cells[0], "`")] = strings.ReplaceAll(cells[2], `\|`, "|")
	}
	return out
}

// firstDiff shows the first line where have and want differ.
func firstDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := range max(len(h), len(w)) {
		var a, b string
		if i < len(h) {
			a = h[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, a, b)
		}
	}
	return ""
}
