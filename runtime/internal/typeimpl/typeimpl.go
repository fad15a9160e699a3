// Package typeimpl lets the facade runtime/acemqimpl reach what package
// runtime keeps unexported on a *runtime.MessageType[T], without runtime
// importing the facade (which imports runtime): package runtime sets these
// functions in its init, so they are set before anything that imports
// runtime, the facade included, can call them. The message type is passed
// as any because a function value cannot be generic.
package typeimpl

import "github.com/acemq/acemq-go/runtime/internal/jsoncheck"

var (
	// SetJSONCheck gives a JSON message type the check acemq-gen
	// generated for its payload and, when shape is not nil, the decode
	// shape its Decode scans a body with. It is called right after the
	// type is made, before any use.
	SetJSONCheck func(mt any, check jsoncheck.Checker, shape func() *jsoncheck.Shape)

	// JSONCheckOf returns what SetJSONCheck gave the message type (nils
	// when nothing).
	JSONCheckOf func(mt any) (check jsoncheck.Checker, shape func() *jsoncheck.Shape)

	// SetJSONEncoder gives a JSON message type the encoder acemq-gen
	// generated for its payload, called right after the type is made.
	SetJSONEncoder func(mt any, enc jsoncheck.Encoder)

	// JSONEncoderOf returns what SetJSONEncoder gave the message type
	// (nil when nothing).
	JSONEncoderOf func(mt any) jsoncheck.Encoder

	// SetJSONDecoder gives a JSON message type the one-pass decoder
	// acemq-gen generated for its payload, called right after the type is
	// made.
	SetJSONDecoder func(mt any, dec jsoncheck.DecodeFunc)

	// JSONDecoderOf returns what SetJSONDecoder gave the message type
	// (nil when nothing).
	JSONDecoderOf func(mt any) jsoncheck.DecodeFunc
)
