//go:generate go tool acemq-gen -f acemq.yaml

package shipping

import (
	"context"
	"errors"

	"github.com/acemq/acemq-go/runtime"
)

// Scheduler is the handler of shipping.orders: for each order placed
// (orders' OrderPlaced, with orders' schema) it publishes a
// ShipmentScheduled; an order without a customer id has nowhere to go and
// is rejected (dead-lettered to shipping.orders.dlq, shipping's own).
type Scheduler struct {
	Shipments *ShipmentsPublisher
}

// HandleOrderPlaced schedules the order's shipment.
func (s *Scheduler) HandleOrderPlaced(ctx context.Context, m *runtime.Message[OrderPlaced]) runtime.Ack {
	if m.Payload.CustomerID == nil {
		return runtime.Reject(errors.New("no customer id: nowhere to ship it"))
	}
	err := s.Shipments.PublishShipmentScheduled(ctx, ShipmentScheduled{OrderID: m.Payload.OrderID, CustomerID: *m.Payload.CustomerID})
	if err != nil {
		return runtime.Retry(err)
	}
	return runtime.Accept()
}

// Start declares shipping's topology (its queue, bound to orders'
// exchange, which it declares too so that either service may start
// first) and consumes shipping.orders until the consumer is closed.
func Start(ctx context.Context, conn *runtime.Connection) (*runtime.Consumer, error) {
	if err := conn.Declare(ctx, Topology()); err != nil {
		return nil, err
	}
	return ConsumeShippingOrders(ctx, conn, &Scheduler{Shipments: NewShipmentsPublisher(conn)})
}
