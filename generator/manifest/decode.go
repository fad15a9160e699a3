package manifest

import (
	"go.yaml.in/yaml/v3"
)

// decodeFile builds the tree from a root the schema has accepted, so every
// node has the shape the schema promises.
func decodeFile(path string, root *yaml.Node) *File {
	f := &File{Path: path}
	for _, kv := range pairs(root) {
		switch kv.key.Value {
		case "version":
			f.Version = intOf(kv.val)
		case "package":
			f.Package = strOf(kv.val)
		case "policies":
			for _, e := range pairs(kv.val) {
				f.Policies = append(f.Policies, decodePolicy(e))
			}
		case "messages":
			for _, e := range pairs(kv.val) {
				f.Messages = append(f.Messages, decodeMessage(e))
			}
		case "exchanges":
			for _, e := range pairs(kv.val) {
				x := &Exchange{Name: strOf(e.key)}
				for _, p := range pairs(e.val) {
					if p.key.Value == "type" {
						x.Type = strOf(p.val)
					}
				}
				f.Exchanges = append(f.Exchanges, x)
			}
		case "queues":
			for _, e := range pairs(kv.val) {
				f.Queues = append(f.Queues, decodeQueue(e))
			}
		case "publishers":
			for _, e := range pairs(kv.val) {
				f.Publishers = append(f.Publishers, decodePublisher(e))
			}
		case "exports":
			for _, n := range resolveAlias(kv.val).Content {
				f.Exports = append(f.Exports, decodeExport(resolveAlias(n)))
			}
		case "registry":
			f.Registry = decodeRegistry(kv)
		case "names":
			f.Names = decodeNames(kv)
		}
	}
	return f
}

func decodeNames(e pair) *Names {
	n := &Names{Pos: posOf(e.key)}
	for _, kv := range pairs(e.val) {
		switch kv.key.Value {
		case "initialisms":
			n.Initialisms = boolPtr(kv.val)
		case "add":
			for _, w := range resolveAlias(kv.val).Content {
				n.Add = append(n.Add, strOf(resolveAlias(w)))
			}
		}
	}
	return n
}

func decodeRegistry(e pair) *Registry {
	r := &Registry{Pos: posOf(e.key)}
	for _, kv := range pairs(e.val) {
		switch kv.key.Value {
		case "directory":
			r.Directory = strPtr(kv.val)
		case "url":
			r.URL = strPtr(kv.val)
		case "username_env":
			r.UsernameEnv = strPtr(kv.val)
		case "password_env":
			r.PasswordEnv = strPtr(kv.val)
		case "token_env":
			r.TokenEnv = strPtr(kv.val)
		case "timeout":
			r.Timeout = strPtr(kv.val)
		case "lookup_only":
			r.LookupOnly = boolPtr(kv.val)
		}
	}
	return r
}

func decodePolicy(e pair) *Policy {
	p := &Policy{Name: strOf(e.key)}
	for _, kv := range pairs(e.val) {
		switch kv.key.Value {
		case "exponential":
			x := &Exponential{Pos: posOf(kv.key)}
			for _, f := range pairs(kv.val) {
				switch f.key.Value {
				case "attempts":
					x.Attempts = intOf(f.val)
				case "initial":
					x.Initial = strOf(f.val)
				case "max":
					x.Max = strOf(f.val)
				case "multiplier":
					x.Multiplier = floatPtr(f.val)
				case "jitter":
					x.Jitter = floatPtr(f.val)
				}
			}
			p.Exponential = x
		case "fixed":
			x := &Fixed{Pos: posOf(kv.key)}
			for _, f := range pairs(kv.val) {
				switch f.key.Value {
				case "attempts":
					x.Attempts = intOf(f.val)
				case "delay":
					x.Delay = strOf(f.val)
				case "jitter":
					x.Jitter = floatPtr(f.val)
				}
			}
			p.Fixed = x
		case "wait_in_broker_from":
			p.WaitInBrokerFrom = strPtr(kv.val)
		case "give_up_after":
			p.GiveUpAfter = strPtr(kv.val)
		case "go_name":
			p.GoName = strPtr(kv.val)
		}
	}
	return p
}

func decodeMessage(e pair) *Message {
	m := &Message{Name: strOf(e.key)}
	for _, kv := range pairs(e.val) {
		switch kv.key.Value {
		case "type":
			m.Type = strOf(kv.val)
		case "schema":
			m.Schema = strOf(kv.val)
		case "subject":
			m.Subject = strPtr(kv.val)
		case "compat":
			m.Compat = strPtr(kv.val)
		case "go_name":
			m.GoName = strPtr(kv.val)
		case "field_go_names":
			for _, f := range pairs(kv.val) {
				m.FieldGoNames = append(m.FieldGoNames, FieldGoName{Pointer: strOf(f.key), GoName: strOf(f.val)})
			}
		}
	}
	return m
}

func decodeQueue(e pair) *Queue {
	q := &Queue{Name: strOf(e.key)}
	for _, kv := range pairs(e.val) {
		switch kv.key.Value {
		case "type":
			q.Type = strPtr(kv.val)
		case "dead_letter":
			q.DeadLetter = boolPtr(kv.val)
		case "delivery_limit":
			q.DeliveryLimit = intPtr(kv.val)
		case "retry":
			q.Retry = strPtr(kv.val)
		case "bindings":
			for _, b := range resolveAlias(kv.val).Content {
				q.Bindings = append(q.Bindings, decodeBinding(resolveAlias(b)))
			}
		case "consumes":
			for _, c := range resolveAlias(kv.val).Content {
				q.Consumes = append(q.Consumes, strOf(c))
			}
		case "requeue_on_failure":
			q.RequeueOnFailure = boolPtr(kv.val)
		case "rungs":
			for _, r := range pairs(kv.val) {
				if r.key.Value == "type" {
					q.RungsType = strPtr(r.val)
				}
			}
		case "arguments":
			for _, a := range pairs(kv.val) {
				q.Arguments = append(q.Arguments, &Argument{Key: strOf(a.key), Value: scalar(resolveAlias(a.val))})
			}
		case "go_name":
			q.GoName = strPtr(kv.val)
		}
	}
	return q
}

func decodeBinding(n *yaml.Node) *Binding {
	b := &Binding{Pos: posOf(n)}
	for _, kv := range pairs(n) {
		switch kv.key.Value {
		case "exchange":
			b.Exchange = strOf(kv.val)
		case "routing_key":
			b.RoutingKey = strPtr(kv.val)
		}
	}
	return b
}

func decodePublisher(e pair) *Publisher {
	p := &Publisher{Name: strOf(e.key)}
	for _, kv := range pairs(e.val) {
		switch kv.key.Value {
		case "exchange":
			p.Exchange = strPtr(kv.val)
		case "messages":
			for _, m := range pairs(kv.val) {
				pm := &Published{Message: strOf(m.key)}
				for _, f := range pairs(m.val) {
					if f.key.Value == "routing_key" {
						pm.RoutingKey = strPtr(f.val)
					}
				}
				p.Messages = append(p.Messages, pm)
			}
		case "go_name":
			p.GoName = strPtr(kv.val)
		}
	}
	return p
}

func decodeExport(n *yaml.Node) *Export {
	x := &Export{Pos: posOf(n)}
	for _, kv := range pairs(n) {
		switch kv.key.Value {
		case "format":
			x.Format = strOf(kv.val)
		case "path":
			x.Path = strOf(kv.val)
		case "vhost":
			x.Vhost = strPtr(kv.val)
		}
	}
	return x
}

type pair struct{ key, val *yaml.Node }

// pairs are the entries of a mapping node in the order written (nothing
// for a null node).
func pairs(n *yaml.Node) []pair {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{key: resolveAlias(n.Content[i]), val: resolveAlias(n.Content[i+1])})
	}
	return out
}

func strOf(n *yaml.Node) Str {
	n = resolveAlias(n)
	return Str{Value: n.Value, Pos: posOf(n)}
}

func strPtr(n *yaml.Node) *Str { s := strOf(n); return &s }

func intOf(n *yaml.Node) Int {
	n = resolveAlias(n)
	v, _ := scalar(n).(int64)
	return Int{Value: int(v), Pos: posOf(n)}
}

func intPtr(n *yaml.Node) *Int { i := intOf(n); return &i }

func floatPtr(n *yaml.Node) *Float {
	n = resolveAlias(n)
	var v float64
	switch x := scalar(n).(type) {
	case int64:
		v = float64(x)
	case float64:
		v = x
	}
	return &Float{Value: v, Pos: posOf(n)}
}

func boolPtr(n *yaml.Node) *Bool {
	n = resolveAlias(n)
	v, _ := scalar(n).(bool)
	return &Bool{Value: v, Pos: posOf(n)}
}
