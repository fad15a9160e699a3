// Package rpc is request and reply's engine, both sides. Package
// runtime's Requester wraps its Requester, and runtime.HandleRequest,
// RetryRequest, Connection.RequesterWaiting and WithReplyToAllowed
// forward to it; nothing here is API, and nothing here imports package
// runtime: it reaches its connection through Conn, an adapter runtime
// gives it (a request route finds it as the core.Conn its route runs on).
//
// What it owns, file by file:
//
//   - requester.go — the requester's side: one channel per Requester on
//     which it consumes its replies and publishes its requests (the
//     reply session, reopened after a loss); the waiting requests by
//     their reply token (x-acemq-reply-token), and by correlation id for
//     a reply without one or a basic.return; the late replies dropped and
//     counted, the correlation ids owed a reply; direct reply-to (the
//     reply can come only to the channel that sent the request: its loss
//     fails the waiting requests) or a reply queue of the Requester's own
//     (declared with x-expires, the requests keep waiting across a loss);
//     the request's expiration from its caller's deadline; the reply's
//     decode (DecodeReply), or the responder's *core.ReplyError.
//   - respond.go — the responder's answer path: the request route
//     (HandleRequest) and its prechecks before any decode (no reply_to, a
//     reply_to that is not a requester's address, another reply type
//     expected, the request expired by its own expiration, its requester
//     gone with WithRequesterCheck), the answer carried out inside the
//     middlewares so that the Ack they see is its outcome, the reply or
//     error reply published to reply_to with the token echoed,
//     RetryRequest's retry only while the caller is still there, and
//     RequesterWaiting's passive declare.
//   - conn.go — Conn, what both sides need of their connection.
package rpc
