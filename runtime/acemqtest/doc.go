// Package acemqtest helps a service test what it built on acemq-go.
//
// Without a broker: NewMessage builds the *runtime.Message[T] a handler
// receives (Delivered also runs the payload through the message type's
// codec, so a payload that breaks its schema fails the test, as a publish
// would); Call runs a handler as the consumer does (a panic is a Retry
// carrying a *runtime.PanicError); AssertAccept, AssertRetry, AssertReject
// and AssertPark check the Ack it returned.
//
// With a broker: Dial connects to the RabbitMQ at ACEMQ_TEST_URL (default
// amqp://guest:guest@localhost:5672/) and closes the connection when the
// test ends; Queue gives each test queue names of its own and deletes them
// (with their .dlq, .parked and .retry.* queues) afterwards; DialVHost
// gives a test a virtual host of its own, for generated code whose queue
// names are fixed. A test that needs a broker is skipped when none answers,
// and fails instead under CI=true, so a CI run never passes by skipping.
// Under go test -short it is skipped without trying, CI=true or not, so
// -short runs the tests that need no broker.
//
// MgmtURL is the broker's management API (ACEMQ_TEST_MGMT_URL, default
// port 15672 on ACEMQ_TEST_URL's host), never with credentials in it;
// Management calls it with ACEMQ_TEST_MGMT_URL's user info when it has one,
// else ACEMQ_TEST_URL's.
//
// acemq-go's own tests use the same implementation (the runtime's
// internal/brokertest, behind this package, and the root module's
// internal/brokertest, built on it): one set of rules for the URL, the
// credentials, -short and CI=true.
package acemqtest
