package compat

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CheckJSON compares two JSON Schema documents (self-contained texts, as
// the generated code holds them) in the directions of mode.
func CheckJSON(message, oldText, newText string, mode Mode) ([]Problem, error) {
	oldS, err := compileJSON(oldText)
	if err != nil {
		return nil, fmt.Errorf("the previous schema: %w", err)
	}
	newS, err := compileJSON(newText)
	if err != nil {
		return nil, fmt.Errorf("the new schema: %w", err)
	}
	var out []Problem
	for _, d := range mode.directions() {
		r, w := newS, oldS // backward: the new schema reads old messages
		if d == Forward {
			r, w = oldS, newS
		}
		c := &jsonChecker{dir: d, memo: map[string][]finding{}}
		out = append(out, place(message, d, c.check(viewOf(r), viewOf(w)))...)
	}
	return out, nil
}

// compileJSON compiles a schema as the runtime's JSON codec does: 2020-12
// unless $schema says otherwise, formats asserted, nothing loaded.
func compileJSON(text string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	const url = "acemq:///schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	return s, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not part of the schema (the schema text must be self-contained)", url)
}
