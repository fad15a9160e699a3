package jsoncheck

import (
	"fmt"
	"strings"
)

// maxViolations caps how many violations a SchemaError spells out; the
// rest are counted ("... and 7 more"), so an error stays header-sized.
const maxViolations = 10

// Violation is one way a JSON document breaks its schema
// (runtime.Violation).
type Violation struct {
	// Location is the JSON Pointer of the offending value in the document,
	// "/items/0/sku"; the document itself is "/".
	Location string
	// Message says what is wrong there, in the validator's words:
	// "missing property", "got string, want integer".
	Message string
}

// String is "<location>: <message>".
func (v Violation) String() string { return v.Location + ": " + v.Message }

// SchemaError is a JSON document that breaks its JSON Schema
// (runtime.SchemaError). Its text is the violations, sorted and joined
// with "; ":
//
//	/customer_id: missing property; /items/0/qty: got string, want integer
//
// On Encode the runtime wraps it together with ErrInvalidMessage (so both
// errors.Is(err, ErrInvalidMessage) and errors.As(err, **SchemaError)
// hold); on Decode it is returned as it is, which makes the parked reason
// "could not be decoded: <where>: <what>".
type SchemaError struct {
	Violations []Violation
}

// Error is the violations, sorted by location, joined with "; ", the first
// ten spelled out.
func (e *SchemaError) Error() string {
	parts := make([]string, 0, min(len(e.Violations), maxViolations)+1)
	for i, v := range e.Violations {
		if i == maxViolations {
			parts = append(parts, fmt.Sprintf("... and %d more", len(e.Violations)-maxViolations))
			break
		}
		parts = append(parts, v.String())
	}
	return strings.Join(parts, "; ")
}
