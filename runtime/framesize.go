package runtime

import "github.com/acemq/acemq-go/runtime/internal/amqpx"

// frameMax is the frame_max of c's connection (amqpx.DefaultFrameMax while it
// has none).
func (c *Connection) frameMax() int {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	return amqpx.FrameMaxOf(conn)
}
