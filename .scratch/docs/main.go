package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

var orderType = runtime.TextType("order.placed.v2")

func main() {
	ctx := context.Background()
	c, err := runtime.Dial(ctx, os.Args[1])
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	policy := runtime.Exponential(4, 100*time.Millisecond, time.Second)
	if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: "orders.new", DeadLetter: true, Retry: policy})); err != nil {
		panic(err)
	}
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		if !strings.Contains(m.Payload, "customer") {
			return runtime.Reject(errors.New("no customer id"))
		}
		return runtime.Retry(errors.New("the warehouse is not answering"))
	}
	cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: "orders.new", Retry: &policy, Routes: []runtime.Route{runtime.Handle(orderType, h)}})
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 6; i++ {
		body := fmt.Sprintf(`{"order_id":"A-%d","customer_id":"C-9"}`, i)
		if i%3 == 0 {
			body = fmt.Sprintf(`{"order_id":"A-%d"}`, i)
		}
		if err := runtime.Publish(ctx, c, orderType, "", body, runtime.WithRoutingKey("orders.new"), runtime.WithHeaders(map[string]any{"tenant": "acme"})); err != nil {
			panic(err)
		}
	}
	for {
		n, _ := c.MessageCount(ctx, "orders.new.dlq")
		if n == 6 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cs.Close(ctx)
}
