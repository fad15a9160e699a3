package runtime

// WithRegistryWaitsForTest sets a consumer's registry hold bounds (first
// wait, longest wait, longest hold before the delivery is nacked back), so
// a test need not wait ten minutes.
var WithRegistryWaitsForTest = withRegistryWaits

// WithAckDelayForTest sets how long a settled delivery waits for its
// batch's ack, so a test can see what only Close or a full batch acks.
var WithAckDelayForTest = withAckDelay

// WithCopyGateForTest holds every set-aside copy's outcome (the ack of its
// original) until the channel is closed, as a late confirm would.
var WithCopyGateForTest = withCopyGate

// CodecBenchSchema is the codec benchmarks' order schema, for the
// observability benchmark's JSON handler.
const CodecBenchSchema = codecBenchSchema
