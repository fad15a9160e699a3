// Package avrounion converts the generic values hamba/avro decodes for the
// branches of a general Avro union into the branches' Go types: the
// implementation of acemqimpl.ConvertAvroBranch, which the code acemq-gen
// generates for such a union calls.
package avrounion

import (
	"math"

	"github.com/hamba/avro/v2"
)

// unionAPI re-encodes union branches: the values were already decoded
// within the caller's limits.
var unionAPI = avro.Config{MaxByteSliceSize: math.MaxInt32}.Freeze()

// ConvertBranch turns the generic value v that hamba/avro decoded for
// a branch of an Avro union into out, a pointer to the branch's Go type,
// by encoding v with the branch's schema and decoding the bytes into out.
// The branch's schema is found by walking path from the schema root
// returns: a field index in a record, 0 for an array's items or a map's
// values, a branch index in a union. The code acemq-gen generates for a
// general union (its FromAny method) calls it; every union-using package
// shares this one copy.
func ConvertBranch(root func() (avro.Schema, error), path []int, v, out any) error {
	s, err := root()
	if err != nil {
		return err
	}
	for _, i := range path {
		if r, ok := s.(*avro.RefSchema); ok {
			s = r.Schema()
		}
		switch x := s.(type) {
		case *avro.RecordSchema:
			s = x.Fields()[i].Type()
		case *avro.ArraySchema:
			s = x.Items()
		case *avro.MapSchema:
			s = x.Values()
		case *avro.UnionSchema:
			s = x.Types()[i]
		}
	}
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	data, err := unionAPI.Marshal(s, v)
	if err != nil {
		return err
	}
	return unionAPI.Unmarshal(s, data, out)
}
