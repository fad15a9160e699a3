package runtime

// SetReplayBatch makes passes read n messages per batch until the returned
// function restores the default (tests only).
func SetReplayBatch(n int) (restore func()) {
	old := replayBatch
	replayBatch = n
	return func() { replayBatch = old }
}
