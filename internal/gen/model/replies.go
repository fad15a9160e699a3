package model

import "fmt"

// replies resolves each message's reply: (docs/request-reply.md): the
// message that answers it, declared under messages: as well. A queue's
// reply: makes every message it consumes a request answered by that
// message; a message then has one reply, whoever declares it (its own
// reply: or each queue's that consumes it), or the manifest is refused.
func (b *builder) replies() {
	// by is, for each message with a reply, who declared it: for the
	// error of a second, other reply.
	by := map[*Message]string{}
	for _, mm := range b.file.Messages {
		if mm.Reply == nil {
			continue
		}
		m := b.messageByName[mm.Name.Value]
		reply := b.messageByName[mm.Reply.Value]
		if reply == nil {
			b.errorf(mm.Reply.Pos, "message %q replies with %q%s", mm.Name.Value, mm.Reply.Value,
				unknown("message", "messages", mm.Reply.Value, b.messageNames()))
			continue
		}
		if reply == m {
			b.errorf(mm.Reply.Pos, "message %q replies with itself; a reply is another message (its caller tells the two apart by type)", mm.Name.Value)
			continue
		}
		m.Reply = reply
		by[m] = "its own reply:"
	}
	for _, mq := range b.file.Queues {
		if mq.Reply == nil {
			continue
		}
		who := fmt.Sprintf("queue %q", mq.Name.Value)
		reply := b.messageByName[mq.Reply.Value]
		if reply == nil {
			b.errorf(mq.Reply.Pos, "%s replies with %q%s", who, mq.Reply.Value,
				unknown("message", "messages", mq.Reply.Value, b.messageNames()))
			continue
		}
		if len(mq.Consumes) == 0 {
			b.errorf(mq.Reply.Pos, "%s replies with %q but consumes nothing: reply: names the answer to the requests the queue consumes", who, mq.Reply.Value)
			continue
		}
		for _, c := range mq.Consumes {
			m := b.messageByName[c.Value]
			switch {
			case m == nil:
				// The topology reports the unknown name.
			case m == reply:
				b.errorf(c.Pos, "%s replies with %q, which it consumes: a reply is another message than the requests it answers", who, mq.Reply.Value)
			case m.Reply != nil && m.Reply != reply:
				b.errorf(mq.Reply.Pos, "%s replies to %q with %q, but %q is answered with %q by %s", who, c.Value, mq.Reply.Value,
					c.Value, m.Reply.Name, by[m])
			default:
				m.Reply = reply
				if by[m] == "" {
					by[m] = who + "'s reply:"
				}
			}
		}
	}
}
