// Package clustertest holds the cluster tests: a publisher and a consumer
// of the runtime on a quorum queue of a three-node RabbitMQ 4.3 cluster
// (make cluster), while a node fails or the cluster restarts one node at a
// time. They are built only with the cluster tag, so make test does not run
// them: make test-cluster brings the cluster up and runs them. Without the
// cluster they skip, or fail under CI=true.
//
// Each scenario prints one line in the faults format:
//
//	fault=<name> published=N confirmed=N handled=N dlq=N parked=N lost=N duplicated=N recover_ms=N
//
// published counts the messages the publisher sent (a batch sent again
// after a lost confirm counts again), confirmed the distinct messages the
// broker confirmed, handled the distinct messages a handler accepted, dlq
// and parked what the set-aside queues hold at the end, lost the confirmed
// messages that are nowhere (never handled, not set aside), duplicated the
// handler calls for a message already accepted, and recover_ms the longest
// time, after a node was stopped, until both the publisher had a confirm
// and the consumer had handled a message again.
//
// TestDelayNodeStopped is the delay topology's (issue 40): quorum levels
// with the leader of one stopped while messages wait; its line is
// fault=delay-node-stopped with the lateness against the due times.
package clustertest
