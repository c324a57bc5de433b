#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""commitlog-kv spoken to by clients nobody here wrote.

  redis_py_test.py --kv BIN                 redis-py: the commands, HELLO, and a
                                            kill -9 loop under write load
  redis_py_test.py --kv BIN --hiredis PROG  runs PROG PORT (tests/kv/hiredis_client.cc)
                                            against a fresh server
  redis_py_test.py --kv BIN --reference     the kill -9 loop alone, in the reference
                                            setting (--reference-rocksdb-wal)

Environment: KILL_CYCLES (default 200; 20 when CI=true). Exit 0 on success,
77 when redis-py is missing (CTest reports a skip), 1 on a failure.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    import redis
except ImportError:
    print("redis-py not installed (Debian: python3-redis)")
    sys.exit(77)

CONFIG = "commitlog_sync: adaptive\ncommitlog_segment_size: 1MiB\ncommitlog_total_space: 4MiB\n"


RUNNING = []  # every server started, killed on the way out


class Server:
    def __init__(self, kv, data, extra=()):
        self.out = open(os.path.join(os.path.dirname(data), "kv.out"), "ab")
        self.proc = subprocess.Popen([kv, "--dir", data, "--port", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=self.out)
        RUNNING.append(self.proc)
        self.port = None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace")
            self.out.write(raw)
            m = re.search(r"listening on [0-9.]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            raise RuntimeError("commitlog-kv did not start; see " + self.out.name)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for raw in self.proc.stdout:
            self.out.write(raw)

    def client(self, **kw):
        kw.setdefault("socket_timeout", 30)
        return redis.Redis(port=self.port, **kw)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_error(r, args, text, what):
    try:
        r.execute_command(*args)
        check(False, what + ": answered")
    except redis.ResponseError as e:
        check(str(e) == text, f"{what}: {e}")


# EXPIRE's conditions as Redis 7 has them: NX no expiry yet, XX one, GT a
# later one, LT an earlier one, no expiry counting as infinite.
def expire_conditions(r):
    r.set("x", "1")
    check(r.expire("x", 100, xx=True) is False and r.ttl("x") == -1, "EXPIRE XX without an expiry")
    check(r.expire("x", 100, gt=True) is False and r.ttl("x") == -1, "EXPIRE GT without an expiry")
    check(r.expire("x", 100, nx=True) and 95 <= r.ttl("x") <= 100, "EXPIRE NX without an expiry")
    check(r.expire("x", 200, nx=True) is False and r.ttl("x") <= 100, "EXPIRE NX with an expiry")
    check(r.expire("x", 50, gt=True) is False and r.ttl("x") > 90, "EXPIRE GT, earlier")
    check(r.expire("x", 200, gt=True) and r.ttl("x") > 190, "EXPIRE GT, later")
    check(r.expire("x", 300, lt=True) is False and r.ttl("x") <= 200, "EXPIRE LT, later")
    check(r.pexpire("x", 50000, xx=True, lt=True) and r.ttl("x") <= 50, "PEXPIRE XX LT, earlier")
    check(r.expire("x", 0, lt=True) and r.exists("x") == 0, "EXPIRE LT into the past deletes")
    check(r.expire("x", 100, xx=True) is False, "EXPIRE XX of a missing key")
    r.set("y", "1")
    check(r.expire("y", 100, lt=True) and r.ttl("y") > 90, "EXPIRE LT without an expiry")
    check(r.expireat("y", int(time.time()) + 1000, gt=True) and r.ttl("y") > 900, "EXPIREAT GT")
    bad = "NX and XX, GT or LT options at the same time are not compatible"
    for opts in (["NX", "XX"], ["nx", "gt"], ["NX", "LT"]):
        expect_error(r, ["EXPIRE", "y", 10, *opts], bad, "EXPIRE " + " ".join(opts))
    expect_error(r, ["PEXPIRE", "y", 10, "GT", "lt"], "GT and LT options at the same time are not compatible",
                 "PEXPIRE GT LT")
    expect_error(r, ["EXPIRE", "y", 10, "XX", "SOON"], "Unsupported option SOON", "EXPIRE SOON")
    expect_error(r, ["EXPIRE", "y", "ten", "GT"], "value is not an integer or out of range", "EXPIRE ten")
    expect_error(r, ["EXPIRE", "y", 2**62, "GT"], "invalid expire time in 'expire' command", "EXPIRE 2^62")
    check(r.ttl("y") > 900, "a refused EXPIRE changes nothing")
    r.delete("y")


# CLIENT LIST shows every connection, with Redis's fields, as of its last command.
def client_list(s, r):
    other = s.client(decode_responses=True)
    check(other.client_setname("other") and other.set("from-other", "1"), "a second client")
    other_id = None
    deadline = time.time() + 10
    while time.time() < deadline:
        listed = {c["name"]: c for c in r.client_list()}
        if "other" in listed and listed["other"]["idle"] != "0":
            break
        time.sleep(0.2)  # until the other client has been idle a second
    check(set(listed) >= {"py", "other"}, f"CLIENT LIST names both clients: {listed}")
    me, them = listed["py"], listed["other"]
    check(me["id"] == str(r.client_id()) and them["id"] != me["id"], "CLIENT LIST id")
    check(them["cmd"] == "set" and me["cmd"] == "client|list", f"CLIENT LIST cmd: {them['cmd']}, {me['cmd']}")
    check(me["addr"] != them["addr"] and them["addr"].startswith("127.0.0.1:"), "CLIENT LIST addr")
    check(me["laddr"] == them["laddr"] == f"127.0.0.1:{s.port}", "CLIENT LIST laddr")
    check(me["db"] == them["db"] == "0", "CLIENT LIST db")
    check(int(them["age"]) >= int(them["idle"]) >= 1 and me["idle"] == "0", "CLIENT LIST age and idle")
    check(r.client_info()["name"] == "py", "CLIENT INFO is the caller's line")
    other_id = them["id"]
    other.connection_pool.disconnect()
    deadline = time.time() + 10
    while any(c["id"] == other_id for c in r.client_list()) and time.time() < deadline:
        time.sleep(0.02)
    check(all(c["id"] != other_id for c in r.client_list()), "a closed connection leaves CLIENT LIST")


def commands(kv, work):
    s = Server(kv, os.path.join(work, "commands"), ["--policy", "batch"])
    r = s.client(decode_responses=True)
    check(r.ping(), "PING")
    check(r.echo("hi") == "hi", "ECHO")
    check(r.set("k", "v"), "SET")
    check(r.get("k") == "v", "GET")
    check(r.set("k", "w", nx=True) is None, "SET NX on an existing key")
    check(r.set("k", "w", xx=True, get=True) == "v", "SET XX GET")
    check(r.set("e", "1", ex=100) and 95 <= r.ttl("e") <= 100, "SET EX and TTL")
    check(r.set("e", "2", keepttl=True) and r.ttl("e") > 90, "KEEPTTL")
    check(r.set("p", "1", px=50), "SET PX")
    deadline = time.time() + 5
    while r.get("p") is not None and time.time() < deadline:
        time.sleep(0.01)
    check(r.get("p") is None and r.exists("p") == 0, "an expired key is never returned")
    check(r.expire("k", 100) and r.pexpire("k", 100000) and r.pttl("k") > 90000, "EXPIRE PEXPIRE PTTL")
    check(r.persist("k") and r.ttl("k") == -1, "PERSIST")
    expire_conditions(r)
    check(r.mset({"a": "1", "b": "2"}) and r.mget("a", "b", "zz") == ["1", "2", None], "MSET MGET")
    check(r.incr("n") == 1 and r.incrby("n", 5) == 6 and r.decr("n") == 5 and r.decrby("n", 10) == -5, "INCR family")
    try:
        r.incr("k")
        check(False, "INCR of a non-integer")
    except redis.ResponseError as e:
        check("not an integer" in str(e), "INCR error text")
    check(r.append("s", "ab") == 2 and r.append("s", "c") == 3 and r.strlen("s") == 3, "APPEND STRLEN")
    check(r.getdel("s") == "abc" and r.get("s") is None, "GETDEL")
    check(r.delete("a", "b", "nope") == 2 and r.exists("a", "b") == 0, "DEL EXISTS")
    check(r.type("k") == "string" and r.type("nope") == "none", "TYPE")
    for i in range(120):
        r.set(f"scan:{i}", i)
    check(set(r.scan_iter(match="scan:*", count=7)) == {f"scan:{i}" for i in range(120)}, "SCAN MATCH COUNT")
    check(len(r.keys("scan:1*")) == 31, "KEYS")
    check(r.dbsize() == 120 + 3, f"DBSIZE {r.dbsize()}")
    check(r.execute_command("SELECT", 0), "SELECT 0")
    check(r.client_setname("py") and r.client_getname() == "py" and r.client_id() > 0, "CLIENT")
    client_list(s, r)
    check(r.command_count() > 30, "COMMAND COUNT")
    check(len(r.command()) == r.command_count(), "COMMAND")
    check(r.config_get("appendfsync") == {"appendfsync": "always"}, "CONFIG GET appendfsync")
    info = r.info()
    for field in ("redis_version", "connected_clients", "used_memory", "loading", "aof_last_write_status", "db0"):
        check(field in info, "INFO " + field)
    check(info["aof_last_write_status"] == "ok", "aof_last_write_status")
    check(r.execute_command("WAITAOF", 1, 0, 0) == [1, 0], "WAITAOF")
    hello = r.execute_command("HELLO", "2")
    check("proto" in hello and hello[hello.index("proto") + 1] == 2, "HELLO 2")
    try:
        r.execute_command("HELLO", "3")
        check(False, "HELLO 3 answered")
    except redis.ResponseError as e:
        check("NOPROTO" in str(e), "HELLO 3: NOPROTO")
    check(r.flushall() and r.dbsize() == 0, "FLUSHALL")
    r.set("before-shutdown", "1")
    try:
        r.shutdown()
    except redis.ConnectionError:
        pass
    check(s.proc.wait(timeout=60) == 0, "SHUTDOWN exit code")
    s = Server(kv, os.path.join(work, "commands"), ["--policy", "batch"])
    check(s.client(decode_responses=True).get("before-shutdown") == "1", "data after SHUTDOWN")
    s.stop()
    print("redis-py: every command answered as Redis does")


def kill_loop(kv, work, cycles, reference=False):
    data = os.path.join(work, "kill-reference" if reference else "kill")
    config = os.path.join(work, "kill.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    extra = ["--config", config, "--memtable-size", "64kb"] + (["--reference-rocksdb-wal"] if reference else [])
    writers, keys = 4, 64
    acked = {}      # key -> last acknowledged value
    pending = {}    # key -> value sent without an answer when the server died
    total_acked = 0
    flushes = discards = wal_syncs = 0
    errors = []
    value_pad = "x" * 512
    for cycle in range(cycles):
        s = Server(kv, data, extra)
        r = s.client(decode_responses=True)
        names = [f"w{w}:{k}" for w in range(writers) for k in range(keys)]
        got = dict(zip(names, r.mget(names)))
        for key in names:
            want = {acked.get(key)} | ({pending[key]} if key in pending else set())
            check(got[key] in want, f"cycle {cycle}: {key} is {got[key]!r}, expected one of {want!r}")
            if got[key] is not None and got[key] != acked.get(key):
                acked[key] = got[key]  # an unanswered write that made it: it is now the last
        pending.clear()
        stop = threading.Event()

        def write(w):
            nonlocal total_acked
            c = s.client(decode_responses=True)
            i = 0
            while not stop.is_set():
                key = f"w{w}:{i % keys}"
                value = f"{cycle}:{i}:{value_pad}"
                pending[key] = value
                try:
                    c.set(key, value)
                except (redis.ConnectionError, redis.TimeoutError):  # the kill
                    return
                except redis.ResponseError as e:  # never expected
                    errors.append(f"cycle {cycle}: SET {key}: {e}")
                    return
                del pending[key]
                acked[key] = value
                total_acked += 1
                i += 1

        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        time.sleep(random.uniform(0.05, 0.3))
        try:
            p = s.client(decode_responses=True, socket_timeout=2).info("persistence")
            flushes += int(p["kv_rocksdb_flushes"])
            discards += int(p["kv_log_discards"])
            wal_syncs += int(p.get("kv_rocksdb_wal_syncs", 0))
        except redis.RedisError:
            pass
        time.sleep(random.uniform(0, 0.05))
        s.kill9()
        stop.set()
        for t in threads:
            t.join()
        check(not errors, "; ".join(errors[:3]))
    setting = "the reference setting" if reference else "the commit log"
    print(f"redis-py kill -9 loop, {setting}: {cycles} cycles, {total_acked} acknowledged SETs, every one "
          f"read back; under the load {flushes} RocksDB flushes, {discards} log discards and "
          f"{wal_syncs} syncs of RocksDB's WAL were done")
    check(flushes > 0, "the kills fell among RocksDB flushes")
    if reference:
        check(wal_syncs > 0, "the reference synced RocksDB's WAL")
    else:
        check(discards > 0, "the kills fell among log discards")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kv", required=True)
    ap.add_argument("--hiredis")
    ap.add_argument("--cycles", type=int)
    ap.add_argument("--reference", action="store_true")
    args = ap.parse_args()
    ci = os.environ.get("CI", "").lower() == "true"
    cycles = args.cycles or int(os.environ.get("KILL_CYCLES", 20 if ci else 200))
    work = tempfile.mkdtemp(prefix="kv-clients.")
    try:
        if args.hiredis:
            s = Server(args.kv, os.path.join(work, "hiredis"), ["--policy", "batch"])
            rc = subprocess.call([args.hiredis, str(s.port)])
            s.stop()
            return rc
        if args.reference:
            kill_loop(args.kv, work, cycles, reference=True)
            return 0
        commands(args.kv, work)
        kill_loop(args.kv, work, cycles)
        return 0
    except AssertionError as e:
        print("FAILED:", e)
        return 1
    finally:
        for proc in RUNNING:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
