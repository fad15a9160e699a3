// Package redisstore deduplicates deliveries on Redis, for teams without
// PostgreSQL: a consumer's message ids are keys (SET NX with a TTL), so a
// second delivery of an id already handled is acknowledged without calling
// the handler.
//
// What it promises, and what it does not (docs/exactly-once.md): the
// marker is not atomic with the handler's effects, which live elsewhere.
// Before the handler runs, the delivery takes a lease on its id (SET NX,
// WithLease, 5 minutes by default), renewed every third of it while the
// handler runs; a second delivery of the id while the lease is held waits
// for it, so two deliveries never run the handler at once while the lease
// lasts. On Accept the key becomes a marker kept for
// WithTTL (24 hours by default); anything else, or a panic, deletes it so
// the retry runs. A process that dies between its handler's effect and the
// marker repeats the effect once the lease expires (at least once); one that
// dies before the effect loses nothing (the lease expires and the redelivery
// runs). A handler whose lease could not be renewed (Redis did not answer
// for a whole lease) may run beside a duplicate. For
// effects in PostgreSQL, pgstore's inbox commits the marker with them.
//
// It is a module of its own (github.com/acemq/acemq-go/redisstore), so a
// service that does not use it does not get go-redis.
package redisstore
