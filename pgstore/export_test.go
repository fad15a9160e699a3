package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
)

// RowHeadersForTest reads the headers of ob's first row as the relay
// reads them.
func RowHeadersForTest(ctx context.Context, pool *pgxpool.Pool, ob *Outbox) (amqp.Table, error) {
	var table, js []byte
	if err := pool.QueryRow(ctx, `SELECT header_table, headers FROM `+ob.table+` ORDER BY id LIMIT 1`).Scan(&table, &js); err != nil {
		return nil, err
	}
	return readHeaders(table, js)
}
