package schema

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// metaURL is the address a document is compiled under to check it against
// its metaschema. It never appears in an error: problems are reported at
// the document's path and a JSON pointer into it.
const metaURL = "acemq-meta:///schema.json"

// checkMetaschema checks d against the metaschema of its draft, as the
// runtime's compiler does (2020-12 unless $schema names another; formats
// asserted, so a pattern must be a regular expression Go accepts), and
// reports each place that breaks it at d's path and a pointer into d, with
// the one keyword that is wrong there, in the order of the text. It says whether d is valid. A
// document whose draft the compiler does not know, or that fails for
// another reason (a $ref to a file, which it does not load here), is left
// to the rest of the generator.
func (b *builder) checkMetaschema(d *jsonDoc, data []byte) bool {
	probs := metaschemaProblems(data)
	src := source{root: d.root, data: data}
	slices.SortStableFunc(probs, func(x, y problem) int { return cmp.Compare(src.offset(x.ptr), src.offset(y.ptr)) })
	for _, p := range probs {
		b.fail(d.path, p.ptr, p.construct, p.msg)
	}
	return len(probs) == 0
}

// metaschemaProblems compiles data alone, loading nothing, and explains
// its metaschema validation error, if that is how the compile failed.
func metaschemaProblems(data []byte) []problem {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil // parseJSON reported it
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	if c.AddResource(metaURL, doc) != nil {
		return nil
	}
	_, err = c.Compile(metaURL)
	var sve *jsonschema.SchemaValidationError
	if !errors.As(err, &sve) {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(sve.Err, &ve) {
		return nil
	}
	// A subschema checked on its own (a $ref into a part of another
	// dialect) is named by the fragment of its URL.
	base := ""
	if _, frag, ok := strings.Cut(sve.URL, "#"); ok {
		base = frag
	}
	return explainMeta(doc, base, ve)
}

// refuseLoader loads no document: only data itself is checked.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not loaded when checking a document against its metaschema", url)
}

// MetaschemaErrors checks a JSON Schema text against its metaschema as
// Build checks each document (and as the runtime's compiler does), and
// returns one error per place that breaks it, at path and a pointer into
// the text, with the one keyword that is wrong: for a text Build did not
// read as it is (a bundle of several files), whose compile the runtime
// refuses all the same.
func MetaschemaErrors(path, text string) []*Error {
	data := []byte(text)
	root, err := parseJSON(data)
	if err != nil {
		return nil
	}
	b := newBuilder(nil)
	if b.checkMetaschema(&jsonDoc{path: path, root: root}, data) {
		return nil
	}
	out := make([]*Error, 0, len(b.errs))
	for _, e := range b.errs {
		out = append(out, e.(*Error))
	}
	return out
}
