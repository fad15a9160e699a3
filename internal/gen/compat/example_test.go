package compat_test

import (
	"fmt"

	"github.com/acemq/acemq-go/internal/gen/compat"
)

func ExampleCheckJSON() {
	old := `{"type": "object", "properties": {"amount": {"type": "number"}, "status": {"enum": ["new", "paid"]}}}`
	cur := `{"type": "object", "properties": {"amount": {"type": "integer"}, "status": {"enum": ["new", "paid", "refunded"]}}}`
	problems, err := compat.CheckJSON("OrderPlaced", old, cur, compat.ModeFull)
	if err != nil {
		panic(err)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// OrderPlaced: $.amount: type-narrowed: breaks backward (new readers, old messages): type was number, is integer
	// OrderPlaced: $.status: enum-value-added: breaks forward (old readers, new messages): "refunded" was added; old readers reject it
}

func ExampleCheckAvro() {
	old := `{"type": "record", "name": "OrderPlaced", "fields": [{"name": "id", "type": "string"}]}`
	cur := `{"type": "record", "name": "OrderPlaced", "fields": [{"name": "id", "type": "string"}, {"name": "total", "type": "long"}]}`
	problems, err := compat.CheckAvro("OrderPlaced", old, cur, compat.ModeFull)
	if err != nil {
		panic(err)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// OrderPlaced: $.total: field-added-without-default: breaks backward (new readers, old messages): old messages lack it; give it a default
}
