package runtime

import "github.com/acemq/acemq-go/runtime/internal/consume"

// trackedConsumers are the connection's consumers not yet closed.
func (c *Connection) trackedConsumers() []*consume.Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*consume.Consumer, 0, len(c.consumers))
	for cs := range c.consumers {
		out = append(out, cs)
	}
	return out
}
