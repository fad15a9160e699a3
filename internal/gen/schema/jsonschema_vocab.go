package schema

import (
	"fmt"
	"slices"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// A keyword no draft defines is ignored by every validator, and an unknown
// format is asserted by none: a typo ("minimun", "datetime") would pass
// without a word and, for a format, change the Go type (date-time is
// time.Time, anything else string). checkVocabulary refuses both, with a
// did-you-mean; the manifest's schema_vocabulary lists a team's own
// (WithJSONVocabulary), and keywords starting with x- are always let be.

// jsonKeywords are the keywords of drafts 4 to 2020-12, asserting or not,
// and OpenAPI's annotations.
var jsonKeywords = func() []string {
	ks := []string{"$schema", "$id", "id", "$defs", "definitions", "$comment", "$anchor", "$vocabulary",
		"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
		// OpenAPI's annotations, common in schemas taken from an API's.
		"example", "nullable", "discriminator", "externalDocs", "xml"}
	for k := range jsonAsserting {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}()

// jsonFormats are the formats of the drafts, the reference validator's
// own (period, semver) and OpenAPI's.
var jsonFormats = []string{
	"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
	"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
	"json-pointer", "relative-json-pointer", "regex", "period", "semver",
	"int32", "int64", "float", "double", "byte", "binary", "password",
}

// Subschemas by keyword: one schema, a map of them, a list of them.
var (
	jsonSubschema = map[string]bool{"items": true, "additionalItems": true, "additionalProperties": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contains": true, "propertyNames": true,
		"not": true, "if": true, "then": true, "else": true, "contentSchema": true}
	jsonSubschemaMap = map[string]bool{"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true, "dependencies": true}
	jsonSubschemaList = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
)

// vocabulary is what WithJSONVocabulary adds to the known keywords and
// formats.
type vocabulary struct {
	keywords, formats map[string]bool
}

// WithJSONVocabulary accepts keywords and formats of a team's own in JSON
// Schemas, beside the drafts' (the manifest's schema_vocabulary).
func WithJSONVocabulary(keywords, formats []string) Option {
	return func(b *builder) {
		for _, k := range keywords {
			b.vocab.keywords[k] = true
		}
		for _, f := range formats {
			b.vocab.formats[f] = true
		}
	}
}

// checkVocabulary reports every unknown keyword and format of d, in the
// order of the text; it says whether there was none.
func (b *builder) checkVocabulary(d *jsonDoc) bool {
	n := len(b.errs)
	b.walkVocabulary(d, d.root, "#")
	return len(b.errs) == n
}

func (b *builder) walkVocabulary(d *jsonDoc, n *jvalue, ptr string) {
	if n == nil || n.kind != jObject {
		return
	}
	for _, k := range n.keys {
		v, at := n.obj[k], ptr+"/"+escapePointer(k)
		switch {
		case !b.knownKeyword(k):
			b.fail(d.path, at, "keyword", fmt.Sprintf("unknown keyword %q%s: no validator asserts it; a team's own keyword goes in the manifest's schema_vocabulary: {keywords: [...]}", k, manifest.DidYouMean(k, jsonKeywords)))
		case k == "format" && v.kind == jString && !b.knownFormat(v.str):
			b.fail(d.path, at, "format", fmt.Sprintf("unknown format %q%s: no validator asserts it, and only date-time maps to time.Time; a team's own format goes in the manifest's schema_vocabulary: {formats: [...]}", v.str, manifest.DidYouMean(v.str, jsonFormats)))
		}
		b.walkSubschemas(d, k, v, at)
	}
}

// walkSubschemas walks the subschemas keyword k holds in v.
func (b *builder) walkSubschemas(d *jsonDoc, k string, v *jvalue, at string) {
	switch {
	case jsonSubschemaList[k] && v.kind == jArray:
		for i, s := range v.arr {
			b.walkVocabulary(d, s, fmt.Sprintf("%s/%d", at, i))
		}
	case jsonSubschema[k]:
		b.walkVocabulary(d, v, at)
	case jsonSubschemaMap[k] && v.kind == jObject:
		for _, name := range v.keys {
			b.walkVocabulary(d, v.obj[name], at+"/"+escapePointer(name))
		}
	}
}

func (b *builder) knownKeyword(k string) bool {
	return len(k) > 2 && k[:2] == "x-" || b.vocab.keywords[k] || slices.Contains(jsonKeywords, k)
}

func (b *builder) knownFormat(f string) bool {
	return b.vocab.formats[f] || slices.Contains(jsonFormats, f)
}
