// Package redistest gives redisstore's tests a real Redis: its address
// (ACEMQ_TEST_REDIS_ADDR, default 127.0.0.1:6379), the broker tests' rule
// (Require: skips under -short without dialling, fails under CI=true,
// skips elsewhere with a hint) and a key prefix of the test's own whose
// keys are deleted at cleanup.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultAddr is used when ACEMQ_TEST_REDIS_ADDR is not set.
const DefaultAddr = "127.0.0.1:6379"

// Addr is the Redis the tests use.
func Addr() string {
	if a := os.Getenv("ACEMQ_TEST_REDIS_ADDR"); a != "" {
		return a
	}
	return DefaultAddr
}

// Require returns Addr once Redis answers on it. Under -short the test is
// skipped without trying; under CI=true a Redis that does not answer fails
// the test; elsewhere the test is skipped with a hint.
func Require(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs Redis: skipped under -short (the quick test)")
	}
	a := Addr()
	conn, err := net.DialTimeout("tcp", a, 3*time.Second)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("no Redis at %s (CI=true: a missing Redis fails): %v", a, err)
		}
		tb.Skipf("no Redis at %s (start it: make stores, or set ACEMQ_TEST_REDIS_ADDR): %v", a, err)
	}
	conn.Close()
	return a
}

// Client is a client of the test Redis and a key prefix of the test's
// own ("test:<8 hex digits>:"); at cleanup its keys are deleted and the
// client closed.
func Client(tb testing.TB) (*redis.Client, string) {
	tb.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: Require(tb)})
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	prefix := "test:" + hex.EncodeToString(b) + ":"
	tb.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		rdb.Close()
	})
	return rdb, prefix
}
