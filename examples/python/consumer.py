"""A stream consumer as a Python worker writes one: redis-py for the stream, psycopg2 for the
order's row, one process per consumer. relab starts it as a role and hands it the lab in RELAB_*
variables (docs/your-code.md); nothing here is relab's code.

    loop: XREADGROUP, [lock: SET NX PX, retry], job (sleep), UPDATE (plain or CAS), [release], XACK
    [recovery: every every_ms, XAUTOCLAIM entries idle min_idle_ms and process them the same way]
    until a read comes back empty and RELAB_STOP_KEY is set.

WRITE (plain | cas) overrides the lab's write mode, to break a lab from the program's side.
"""
import json
import os
import sys
import time

import psycopg2
import redis

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def env(name):
    value = os.environ.get(name)
    if value is None:
        sys.exit(f"consumer.py: {name} is not set: run me as a role of a relab lab")
    return value


class Trace:
    """The optional JSON-lines trace on RELAB_TRACE_FD, stamped with CLOCK_MONOTONIC (relab's clock)."""

    def __init__(self):
        fd = os.environ.get("RELAB_TRACE_FD")
        self.out = os.fdopen(int(fd), "a", buffering=1) if fd else None

    def __call__(self, op, **fields):
        if self.out:
            self.out.write(json.dumps({"op": op, "t_ns": time.monotonic_ns(), **fields}) + "\n")


class Consumer:
    def __init__(self):
        self.me = env("RELAB_CONSUMER")
        self.stream = env("RELAB_STREAM")
        self.group = env("RELAB_GROUP")
        self.costs = json.loads(env("RELAB_JOB_COST_MS"))
        self.mode = os.environ.get("WRITE") or env("RELAB_WRITE_MODE")
        if self.mode not in ("plain", "cas"):
            sys.exit(f"consumer.py: write mode {self.mode!r} is not one this consumer knows (plain, cas)")
        self.lock_key = os.environ.get("RELAB_LOCK_KEY")
        # Named as relab asks: its start barrier and its link faults find the connection by name.
        self.redis = redis.Redis.from_url(env("RELAB_REDIS_URL"), client_name=env("RELAB_CLIENT_NAME"),
                                          decode_responses=True)
        # RELAB_PG_URL carries the trial's schema and the application_name relab's write log knows.
        self.db = psycopg2.connect(env("RELAB_PG_URL"))
        self.db.autocommit = True
        self.trace = Trace()

    def process(self, entry, fields, via):
        ev = {"order": int(fields["order"]), "type": fields["type"], "v": int(fields["v"])}
        self.trace("receive", entry=entry, event=ev, via=via)
        lock = token = None
        if self.lock_key:
            lock, token = self.lock_key.replace("{order}", str(ev["order"])), f"{self.me}:{entry}"
            ttl, attempts = int(env("RELAB_LOCK_TTL_MS")), 1
            while not self.redis.set(lock, token, nx=True, px=ttl):
                time.sleep(int(env("RELAB_LOCK_RETRY_MS")) / 1000)
                attempts += 1
            self.trace("lock_acquire", key=lock, attempts=attempts, ttl_ms=ttl, event=ev)
        time.sleep(self.costs.get(ev["type"], 0) / 1000)
        with self.db.cursor() as cur:
            if self.mode == "cas":
                cur.execute("UPDATE tmp_orders SET status = %s, version = %s WHERE id = %s AND version < %s",
                            (ev["type"], ev["v"], ev["order"], ev["v"]))
            else:
                cur.execute("UPDATE tmp_orders SET status = %s WHERE id = %s", (ev["type"], ev["order"]))
            self.trace("write", entry=entry, event=ev, status=ev["type"], affected=cur.rowcount)
        if lock:
            released = self.redis.eval(RELEASE, 1, lock, token)
            self.trace("lock_release", key=lock, result=int(released), event=ev)
        self.redis.xack(self.stream, self.group, entry)
        self.trace("ack", entry=entry)

    def claim_idle(self):
        cursor = "0-0"
        while True:
            reply = self.redis.xautoclaim(self.stream, self.group, self.me, int(env("RELAB_AUTOCLAIM_MIN_IDLE_MS")),
                                          cursor, count=int(env("RELAB_AUTOCLAIM_COUNT")))
            cursor, claimed = reply[0], reply[1]
            for entry, fields in claimed:
                if fields:
                    self.process(entry, fields, "claim")
            if cursor == "0-0":
                return

    def run(self):
        every_ms = int(os.environ.get("RELAB_AUTOCLAIM_EVERY_MS", "0"))
        block = int(env("RELAB_BLOCK_MS"))
        if every_ms:
            block = min(block, every_ms)
        next_claim = time.monotonic() + every_ms / 1000
        while True:
            if every_ms and time.monotonic() >= next_claim:
                self.claim_idle()
                next_claim = time.monotonic() + every_ms / 1000
            read = self.redis.xreadgroup(self.group, self.me, {self.stream: ">"}, count=int(env("RELAB_READ_COUNT")),
                                         block=block)
            if not read:
                if self.redis.exists(env("RELAB_STOP_KEY")):
                    return
                continue
            for _, entries in read:
                for entry, fields in entries:
                    self.process(entry, fields, "new")


if __name__ == "__main__":
    Consumer().run()
