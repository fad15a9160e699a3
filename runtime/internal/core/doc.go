// Package core owns the values a handler and the engines share: Ack and
// its kinds, Envelope and the reading of its headers, RetryPolicy,
// PanicError and the sentinel errors. Package runtime aliases each of them
// (type Ack = core.Ack) and forwards its constructors, so go doc shows
// them under runtime; the engines under runtime/internal use them without
// importing package runtime.
//
// Only what a user calls is an exported method here (an exported method is
// callable through the alias). What only the engines need is a function:
// core.Reason, core.EnvelopeOf, core.Jittered(p, d), core.Rungs(p), ...
package core
