package schema

type jsonDoc struct{}

func (b *builder) loadJSON(in Input) {}
