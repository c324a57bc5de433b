#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The attack run: what a hostile or careless user can do to the tools and to
commitlog-kv, and what each does about it. Prints one line per finding;
docs/testing.md records a run.

    scripts/attack-run.py [--bin build/bin]
"""
import argparse
import multiprocessing
import os
import resource
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time


def mode(path):
    return oct(stat.S_IMODE(os.stat(path).st_mode))


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Kv:
    def __init__(self, binary, data, *flags):
        self.out = tempfile.NamedTemporaryFile(prefix="kv-", suffix=".out", delete=False)
        self.proc = subprocess.Popen([binary, "--dir", data, "--port", "0", *flags],
                                     stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            text = open(self.out.name).read()
            at = text.find("listening on ")
            if at >= 0 and "\n" in text[at:]:
                self.port = int(text[at:].split(":")[1].split()[0])
                return
            if self.proc.poll() is not None:
                raise SystemExit("commitlog-kv exited:\n" + text)
            time.sleep(0.01)
        raise SystemExit("commitlog-kv did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        os.unlink(self.out.name)


def connect(port, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def command(s, *args):
    s.sendall(f"*{len(args)}\r\n".encode() + b"".join(
        f"${len(a)}\r\n".encode() + a.encode() + b"\r\n" for a in args))
    reply = b""
    while not reply.endswith(b"\r\n"):
        chunk = s.recv(65536)
        if not chunk:
            return None
        reply += chunk
    if reply.startswith(b"$"):
        n = int(reply[1:reply.index(b"\r\n")])
        while len(reply) < reply.index(b"\r\n") + 2 + n + 2:
            reply += s.recv(65536)
    return reply.decode(errors="replace")


def info(port, field):
    s = connect(port)
    text = command(s, "INFO", "everything")
    s.close()
    for line in text.split("\r\n"):
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    return None


def ping_latencies(port, count, stop=None):
    s = connect(port)
    out = []
    for _ in range(count):
        if stop is not None and stop.is_set():
            break
        t = time.perf_counter()
        command(s, "PING")
        out.append((time.perf_counter() - t) * 1e3)
    s.close()
    return out


def summary(ms):
    ms = sorted(ms)
    return (f"n={len(ms)} p50={ms[len(ms) // 2]:.3f} ms p99={ms[int(len(ms) * 0.99)]:.3f} ms "
            f"max={ms[-1]:.3f} ms")


def tools_on_foreign_dirs(cli, root):
    print("## tools on a directory holding a foreign file")
    for name, args in [("demo", ["demo", "--threads", "1", "--fibers", "2", "--mutations", "2"]),
                       ("bench", ["bench", "--engines", "commitlog", "--producers", "1",
                                  "--duration", "0.05s", "--warmup", "0.01s", "--policies", "batch"]),
                       ("stress", ["stress", "--duration", "0.05"])]:
        d = os.path.join(root, "foreign-" + name)
        os.makedirs(os.path.join(d, "sub"))
        with open(os.path.join(d, "notes.txt"), "w") as f:
            f.write("mine")
        r = subprocess.run([cli, *args, "--dir", d], capture_output=True, text=True)
        kept = sorted(os.listdir(d)) == ["notes.txt", "sub"] and open(os.path.join(d, "notes.txt")).read() == "mine"
        print(f"{name}: exit {r.returncode}, foreign file kept: {kept}, stderr: {r.stderr.strip()}")


def file_modes(kv, cli, root):
    print("## modes of what the log, the tools and the server create (umask "
          f"{oct(os.umask(0o022))})")
    os.umask(0o022)
    log = os.path.join(root, "demo", "log")
    subprocess.run([cli, "demo", "--dir", log, "--threads", "1", "--fibers", "1", "--mutations", "1"],
                   capture_output=True, check=True)
    seg = next(f for f in os.listdir(log) if f.endswith(".log"))
    print(f"demo: {os.path.dirname(log)} {mode(os.path.dirname(log))}, {log} {mode(log)}, segment {mode(os.path.join(log, seg))}")
    data = os.path.join(root, "kv-modes", "data")
    server = Kv(kv, data)
    s = connect(server.port)
    command(s, "SET", "k", "v")
    s.close()
    server.stop()
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "kv-modes")):
        for n in [dirpath] + [os.path.join(dirpath, f) for f in filenames]:
            print(f"kv: {os.path.relpath(n, root)} {mode(n)}")


def protected_mode(kv, root):
    print("## bind 0.0.0.0")
    r = subprocess.run([kv, "--dir", os.path.join(root, "exposed"), "--port", "0", "--bind", "0.0.0.0"],
                       capture_output=True, text=True, timeout=20)
    print(f"without a password: exit {r.returncode}: {r.stderr.strip()}")
    server = Kv(kv, os.path.join(root, "exposed"), "--bind", "0.0.0.0", "--requirepass", "pw")
    s = connect(server.port)
    print(f"with --requirepass: PING -> {command(s, 'PING').strip()}; AUTH wrong -> "
          f"{command(s, 'AUTH', 'guess').strip()}; AUTH pw -> {command(s, 'AUTH', 'pw').strip()}")
    s.close()
    server.stop()


def memory_attack(kv, root, clients, mb, flags):
    data = os.path.join(root, f"mem-{clients}-{len(flags)}")
    server = Kv(kv, data, *flags)
    watcher = connect(server.port)
    command(watcher, "PING")
    before = rss_mib(server.proc.pid)
    peak = before
    header = b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$16777216\r\n"
    sockets, chunk = [], b"x" * (1 << 20)
    for _ in range(clients):
        s = connect(server.port)
        sockets.append(s)
        try:
            s.sendall(header)
            for _ in range(int(mb)):
                s.sendall(chunk)
            s.sendall(chunk[:int((mb - int(mb)) * (1 << 20))])
        except OSError:
            pass
        peak = max(peak, rss_mib(server.proc.pid))
    time.sleep(0.2)  # let the disconnected clients' fibers free their buffers
    after = rss_mib(server.proc.pid)
    t = time.perf_counter()
    pong = command(watcher, "PING")
    ping_ms = (time.perf_counter() - t) * 1e3
    print(f"{clients} clients x {mb} MB of a 16 MB SET, {' '.join(flags) or 'defaults'}: RSS {before:.0f} MiB -> "
          f"peak {peak:.0f} MiB, {after:.0f} MiB after; evicted_clients={info(server.port, 'evicted_clients')} "
          f"mem_clients_normal={int(info(server.port, 'mem_clients_normal')) / (1 << 20):.0f} MiB; "
          f"another client's PING {pong.strip()} in {ping_ms:.2f} ms")
    for s in sockets:
        s.close()
    watcher.close()
    server.stop()


def hold_connections(port, count, ready, release):
    conns = [connect(port) for _ in range(count)]
    ready.set()
    release.wait()
    for c in conns:
        c.close()


def connection_flood(kv, root, idle):
    print(f"## {idle} idle connections (opened by another process)")
    server = Kv(kv, os.path.join(root, "flood"))
    quiet = ping_latencies(server.port, 5000)
    ready, release = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.Process(target=hold_connections, args=(server.port, idle, ready, release))
    stop = threading.Event()
    during = []
    pinger = threading.Thread(target=lambda: during.extend(ping_latencies(server.port, 10 ** 9, stop)))
    pinger.start()
    holder.start()
    ready.wait()
    stop.set()
    pinger.join()
    held = ping_latencies(server.port, 5000)
    print(f"PING with no other client: {summary(quiet)}")
    print(f"PING while {idle} clients connect: {summary(during)}")
    print(f"PING with {idle} idle clients held: {summary(held)}")
    print(f"connected_clients={info(server.port, 'connected_clients')}")
    release.set()
    holder.join()
    server.stop()


def maxclients_flood(kv, root):
    print("## maxclients")
    server = Kv(kv, os.path.join(root, "maxclients"), "--maxclients", "100")
    admin = connect(server.port)
    conns, refused = [], 0
    for _ in range(149):
        c = connect(server.port)
        c.settimeout(0.2)
        try:
            if c.recv(100).startswith(b"-ERR max number of clients reached"):
                refused += 1
        except socket.timeout:
            pass
        conns.append(c)
    stats = command(admin, "INFO", "stats")
    rejected = next(l for l in stats.split("\r\n") if l.startswith("rejected_connections:"))
    print(f"--maxclients 100, 150 connections: {refused} told '-ERR max number of clients reached', {rejected}")
    for c in conns:
        c.close()
    server.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="build/bin")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    cli, kv = os.path.join(args.bin, "commitlog"), os.path.join(args.bin, "commitlog-kv")
    root = tempfile.mkdtemp(prefix="attack-")
    try:
        tools_on_foreign_dirs(cli, root)
        file_modes(kv, cli, root)
        protected_mode(kv, root)
        print("## memory")
        memory_attack(kv, root, 24, 15.9, [])
        memory_attack(kv, root, 40, 15, ["--maxmemory-clients", "128mb"])
        memory_attack(kv, root, 24, 15.9, ["--maxmemory-clients", "0"])
        connection_flood(kv, root, 1000)
        maxclients_flood(kv, root)
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
