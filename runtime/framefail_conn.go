package runtime

// isClosed reports a Connection that Close was called on.
func (c *Connection) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
