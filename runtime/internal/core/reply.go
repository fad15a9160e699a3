package core

import (
	"errors"
	"fmt"
)

// ErrNoReply is matched by the error of a request whose reply can no longer
// arrive: its reply channel closed (the connection was lost; direct
// reply-to delivers a reply only to the channel that sent the request) or
// the Requester was closed. It also matches ErrUnavailable when the
// connection was lost, ErrClosed when the Requester or its connection was
// closed.
var ErrNoReply = errors.New("acemq: the reply cannot arrive")

// ReplyError is a responder's answer that is an error, not a reply: what a
// request's caller gets from Request instead of a reply, never a timeout.
// A request handler that returns one has its Code and Reason sent as they
// are; any other error is sent with Code "error" and its text as Reason.
type ReplyError struct {
	// Code names the kind of failure: "error" for a handler's error,
	// "panic" for a handler (or a middleware) that panicked,
	// "bad_request" for a request the responder could not decode,
	// "wrong_reply_type" for a request that expects a reply type the
	// responder does not send, "rejected" and "parked" for a request a
	// middleware rejected or parked, "not_handled" for one a middleware
	// settled without calling the handler, or a responder's own code.
	Code string
	// Reason is the responder's text (capped at 4096 bytes).
	Reason string
	// Request is the request's message type; Responder the responder's
	// x-acemq-origin. Both are filled in by the caller's side.
	Request, Responder string
}

func (e *ReplyError) Error() string {
	who := ""
	if e.Responder != "" {
		who = " (" + e.Responder + ")"
	}
	code := e.Code
	if code == "" {
		code = "error"
	}
	return fmt.Sprintf("the responder%s answered %s with %s: %s", who, e.Request, code, e.Reason)
}
