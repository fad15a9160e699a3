package runtime

import "github.com/acemq/acemq-go/runtime/internal/core"

// PanicError is a handler's panic, turned into a Retry. Its text — what
// x-acemq-error carries, and so a dead letter's reason once the attempts
// run out — is "handler panicked: <value> (at <function> <file>:<line>)",
// the frame where the panic was raised (Frame: outside Go's own runtime
// package, so a nil map write names the handler's line); Stack is the
// whole goroutine stack, which the consumer logs at Error.
type PanicError = core.PanicError

// NewPanicError describes the panic whose value v a deferred recover just
// took: the frame that raised it and the stack. It must be called in that
// deferred function, while the panicking frames are still on the stack
// (acemqtest.Call uses it to report a panic as the consumer does).
func NewPanicError(v any) *PanicError { return core.NewPanicError(v) }
