package model

// replies resolves each message's reply: (docs/request-reply.md): the
// message that answers it, declared under messages: as well.
func (b *builder) replies() {
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
	}
}
