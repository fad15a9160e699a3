// Package core owns the values a handler and the engines share: Ack and
// its kinds, Envelope and the reading of its headers, RetryPolicy,
// PanicError, ReplyError and the sentinel errors, the message id, and the
// handler's side of a route (Message, Handler, Route, Incoming,
// HandlerFunc, Middleware: handler.go) with what a delivery's decode is
// told (DecodeInfo) and the connection a route runs on (Conn). Package
// runtime aliases each user type (type Ack = core.Ack; Go's generic
// aliases for Message[T] and Handler[T]) and forwards its constructors,
// so go doc shows them under runtime; the engines under runtime/internal
// use them without importing package runtime.
//
// Only what a user calls is an exported method here (an exported method is
// callable through the alias). What only the engines need is a function:
// core.Reason, core.EnvelopeOf, core.Jittered(p, d), core.Rungs(p),
// core.RunRoute(r, ...), ...
package core
