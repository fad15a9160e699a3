package reminders_test

import (
	"context"
	"log"
	"time"

	"github.com/acemq/acemq-go/golden/reminders/want"
	"github.com/acemq/acemq-go/runtime"
)

// "Remind the customer in three days": Topology() declares the delay
// topology with the rest (once per broker, whoever declares it), and the
// generated PublishReminderDueAfter returns once the broker holds the
// message; three days later (to the second, rounded up) it arrives at
// golden.reminders with the routing key reminder.due, as
// PublishReminderDue's would now. PublishReminderDueAt takes a time
// instead.
func ExampleRemindersPublisher_PublishReminderDueAfter() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.Declare(ctx, reminders.Topology()); err != nil {
		log.Fatal(err)
	}
	pub := reminders.NewRemindersPublisher(conn)
	m := reminders.ReminderDue{CustomerID: "C-1", Text: "invoice 7 is due"}
	if err := pub.PublishReminderDueAfter(ctx, 72*time.Hour, m); err != nil {
		log.Fatal(err)
	}
	if err := pub.PublishReminderDueAt(ctx, time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC), m); err != nil {
		log.Fatal(err)
	}
}
