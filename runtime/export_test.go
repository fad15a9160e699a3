package runtime

// WithRegistryWaitsForTest sets a consumer's registry hold bounds (first
// wait, longest wait, longest hold before the delivery is nacked back), so
// a test need not wait ten minutes.
var WithRegistryWaitsForTest = withRegistryWaits
