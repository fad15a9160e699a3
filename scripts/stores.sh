#!/usr/bin/env bash
# Makes sure the stores' tests have their services: PostgreSQL on
# 127.0.0.1:5432 (trust auth, database test) and Redis on 127.0.0.1:6379.
# Each is used when it answers, else started with the machine's own
# command (the machine notes': pg_ctlcluster, redis-server), then waited for.
set -euo pipefail

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # name port
  for _ in $(seq 1 60); do
    answers "$2" && return 0
    sleep 1
  done
  echo "stores: $1 does not answer on 127.0.0.1:$2 after 60s" >&2
  return 1
}

if ! answers 5432; then
  if ! command -v pg_ctlcluster >/dev/null; then
    echo "stores: PostgreSQL is down and pg_ctlcluster is missing (install Debian's postgresql)" >&2
    exit 1
  fi
  echo "stores: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  wait_for PostgreSQL 5432
fi

if ! answers 6379; then
  if ! command -v redis-server >/dev/null; then
    echo "stores: Redis is down and redis-server is missing (install Debian's redis-server)" >&2
    exit 1
  fi
  echo "stores: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_for Redis 6379
fi
