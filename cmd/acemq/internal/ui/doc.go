// Package ui is acemq ui: the operator's web console over the failed
// messages of a manifest's queues (their .dlq and .parked), the replays
// and the live topology. One process, its page and script embedded
// (nothing is fetched from elsewhere: it works offline), listening on
// loopback unless told otherwise.
//
// # Design
//
// The dead letters are read without consuming them (runtime's
// Connection.Browse), in one pass over every source queue that folds each
// message into groups (by reason, queue, type and origin) and keeps a
// small row per message (its position, a key hashed from its identity and
// body, and the fields the page lists); bodies are never kept: a message
// is read again when it is opened, edited or searched. The page polls the
// pass, so the first groups show while it goes on.
//
// Every change goes through the runtime's public API: replays and
// discards are Connection.Replay passes (a discard is a replay to the
// archive queue with the attempts kept), an edit publishes its copy with
// Connection.PublishOutgoing and acks the original (held by a Browse) only
// after the copy's confirm. A queue is read or changed by one thing at a
// time (a lock per queue), since a look holds what it read.
//
// Security: read-only unless started with a token; every action needs a
// signed-in session (or a bearer token) and, from a browser, the session's
// CSRF token in a header; the page renders every text through textContent
// under a Content-Security-Policy that allows no inline script; every text
// the server sends passes a scrubber that removes the broker's password.
// Each action is written to the audit file before its result is shown.
package ui
