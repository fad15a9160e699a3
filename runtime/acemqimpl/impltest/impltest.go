// Package impltest runs the parts acemq-gen generates for a JSON message
// type alone (its check, decode check, encoder and decoder), without the
// reference validator and encoding/json that package runtime falls back
// on, so that acemq-go's own tests can compare each with the reference:
// the generator's differential tests, internal/decodetest and
// internal/encodetest, and the codec benchmarks. It is for those tests
// only; a program, and the code acemq-gen generates, never import it, and
// its API may change in any release.
package impltest

import (
	"encoding/json"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqimpl"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
)

// GeneratedCheck runs the generated check of a JSON type alone, without
// the reference validator, and returns what it found (ok is false when the
// type has none, or the check does not take v). Publish and Validate use
// both.
func GeneratedCheck[T any](mt *runtime.MessageType[T], v T) (c *acemqimpl.JSONCheck, ok bool) {
	check, _ := msgtype.JSONCheckOf(mt)
	if check == nil {
		return nil, false
	}
	c = new(acemqimpl.JSONCheck)
	if !check(v, c) {
		return nil, false
	}
	return c, true
}

// GeneratedDecodeCheck runs the decode check of a JSON type alone: body
// unmarshalled into a zero T (ok is false when that fails, or the type has
// no decode check), its shape's scan and the generated check, without the
// reference validator.
func GeneratedDecodeCheck[T any](mt *runtime.MessageType[T], body []byte) (c *acemqimpl.JSONCheck, ok bool) {
	check, shape := msgtype.JSONCheckOf(mt)
	if check == nil || shape == nil {
		return nil, false
	}
	var v T
	if json.Unmarshal(body, &v) != nil {
		return nil, false
	}
	c = new(acemqimpl.JSONCheck)
	jsoncheck.Scan(c, body, shape())
	if !check(&v, c) {
		return nil, false
	}
	return c, true
}

// GeneratedEncode runs the generated encoder of a JSON type alone: the
// bytes it writes for v, wrote false when it does not take v (json.Marshal
// would refuse it), has false when the type has no encoder.
func GeneratedEncode[T any](mt *runtime.MessageType[T], v T) (body []byte, wrote, has bool) {
	enc := msgtype.JSONEncoderOf(mt)
	if enc == nil {
		return nil, false, false
	}
	body, wrote = jsoncheck.Encode(enc, v)
	return body, wrote, true
}

// GeneratedDecode runs the generated decoder of a JSON type alone, with
// the type's decode shape (none when it has no check): took says it
// decoded body into v (v is then json.Unmarshal's value, and the shape's
// scan finds nothing), passed that the generated check passes v too; has
// is false when the type has no decoder.
func GeneratedDecode[T any](mt *runtime.MessageType[T], body []byte) (v T, took, passed, has bool) {
	dec := msgtype.JSONDecoderOf(mt)
	if dec == nil {
		return v, false, false, false
	}
	check, shape := msgtype.JSONCheckOf(mt)
	var sh *jsoncheck.Shape
	if shape != nil {
		sh = shape()
	}
	if check == nil || sh == nil {
		return v, jsoncheck.Decode(dec, nil, body, &v), false, true
	}
	took, passed = jsoncheck.DecodeFast(dec, check, sh, body, &v)
	return v, took, passed, true
}
