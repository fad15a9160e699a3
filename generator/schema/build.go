package schema

import "errors"

// Build maps every input. reserved are Go identifiers already used by the
// model (publishers, handlers, policies...) that no type may take. All
// problems are returned at once, joined with errors.Join, each an *Error.
func Build(inputs []Input, reserved []string) (*Universe, error) {
	u := &Universe{Roots: map[string]*Type{}}
	var errs []error
	_ = reserved
	_ = inputs
	return u, errors.Join(errs...)
}
