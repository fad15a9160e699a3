package wire_test

import (
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

// The examples read a runtime.RetryPolicy the way the generator and the
// CLI do: its waits (wire.Waits over Attempts and Delay) and its threshold
// (WaitInBrokerFrom).

// A consumer holds waits below 30s in memory up to its hold budget
// (WithHoldBudget); past it a wait spills to the rung for that wait,
// rounded up to whole seconds. The topology declares those rungs too.
func ExampleSpillRungs() {
	policy := runtime.Exponential(4, 300*time.Millisecond, time.Minute)
	fmt.Println(policy.Schedule())
	fmt.Println(wire.SpillRungs(wire.Waits(policy.Attempts(), policy.Delay), policy.WaitInBrokerFrom()))
	for _, d := range wire.Rungs(wire.Waits(policy.Attempts(), policy.Delay), policy.WaitInBrokerFrom()) {
		fmt.Println(wire.RungQueue("orders.new", d))
	}
	// Output:
	// [300ms 600ms 1.2s]
	// [1s 2s]
	// orders.new.retry.1s
	// orders.new.retry.2s
}

// Waits of 30s and more are held by the broker, one rung queue per
// distinct delay; shorter ones by the consumer.
func ExampleBrokerRungs() {
	policy := runtime.Exponential(6, 10*time.Second, 300*time.Second)
	fmt.Println(policy.Schedule())
	fmt.Println(wire.BrokerRungs(wire.Waits(policy.Attempts(), policy.Delay), policy.WaitInBrokerFrom()))
	for _, d := range wire.BrokerRungs(wire.Waits(policy.Attempts(), policy.Delay), policy.WaitInBrokerFrom()) {
		fmt.Println(wire.RungQueue("orders.new", d))
	}
	fmt.Println(wire.BrokerRungs(wire.Waits(policy.Attempts(), policy.Delay), 0))
	// Output:
	// [10s 20s 40s 1m20s 2m40s]
	// [40s 1m20s 2m40s]
	// orders.new.retry.40s
	// orders.new.retry.80s
	// orders.new.retry.160s
	// []
}

// RabbitMQ 4.3's quorum queues delay a rejected message themselves, by
// min(min × failures, max): a fixed or linear ladder without jitter, not an
// exponential one. Queue.NativeRetry declares the queue so, with no rungs.
func ExampleNativeRetry() {
	fixed := runtime.Fixed(4, 45*time.Second)
	fmt.Println(wire.NativeRetry(fixed.Schedule(), fixed.Jitter()))
	short := runtime.Exponential(3, time.Second, 2*time.Second).WithJitter(0)
	fmt.Println(wire.NativeRetry(short.Schedule(), short.Jitter()))
	long := runtime.Exponential(4, time.Second, time.Minute).WithJitter(0)
	_, _, err := wire.NativeRetry(long.Schedule(), long.Jitter())
	fmt.Println(err)
	top := runtime.NewTopology().Queue(runtime.Queue{Name: "orders.new", Type: runtime.Quorum, DeadLetter: true,
		Retry: runtime.Fixed(4, 45*time.Second), NativeRetry: true})
	d, _ := top.Declarations()
	fmt.Println(len(d.Queues), d.Queues[0].Arguments["x-delayed-retry-min"], d.Queues[0].Arguments["x-delayed-retry-type"])
	// Output:
	// 45s 45s <nil>
	// 1s 2s <nil>
	// retry policy: waits [1s 2s 4s]: the broker's delay is min(min × failures, max), 3s after failure 3, not 4s; native retry gives a fixed or linear ladder only (keep the rungs for this one)
	// 3 45000 failed
}
