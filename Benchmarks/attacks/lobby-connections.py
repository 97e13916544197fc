#!/usr/bin/env python3
"""Issue 21, availability 1 and 2: the lobby under 2,000 idle and slow connections.

Starts the built `nearplay lobby serve` on a temporary database, opens 2,000 connections from 40
loopback addresses (50 each, under the per-address share of 64) that send nothing, then 2,000
that send a request head one byte a second, and meanwhile times GET /v1/health on a fresh
connection. Prints the lobby's open descriptors and resident memory at each step, how many
attacking connections it closed by the head timeout (10 s), and the time from SIGTERM to exit
with 1,000 connections held (idle, half a head, half a body).

    python3 Benchmarks/attacks/lobby-connections.py [path/to/nearplay]
"""
import os, re, resource, select, shutil, signal, socket, subprocess, sys, tempfile, time

ADDRESSES = [f"127.0.0.{n}" for n in range(2, 42)]
PER_ADDRESS = 50


def lobby(binary, folder):
    log = open(os.path.join(folder, "lobby.log"), "w+")
    process = subprocess.Popen([binary, "lobby", "serve", "--db", os.path.join(folder, "lobby.sqlite"), "--port", "0",
                                "--bcrypt-cost", "4"], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        log.seek(0)
        match = re.search(r"lobby listening on http://[^:]+:(\d+)", log.read())
        if match:
            # `nearplay lobby` runs `nearplay-lobby`: measure the server process itself.
            return process, int(match.group(1)), server_pid(process.pid)
        time.sleep(0.1)
    raise SystemExit("the lobby did not start")


def server_pid(pid):
    children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    return int(children[0]) if children else pid


def figures(pid):
    descriptors = len(os.listdir(f"/proc/{pid}/fd"))
    rss = next(int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS:"))
    return descriptors, rss / 1024


def health(port):
    """Milliseconds for GET /v1/health on a fresh connection."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: lobby\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:80]
    return (time.monotonic() - started) * 1000


def open_connections(port, count_per_address=PER_ADDRESS):
    connections = []
    for address in ADDRESSES:
        for _ in range(count_per_address):
            s = socket.socket()
            s.bind((address, 0))
            s.connect(("127.0.0.1", port))
            s.setblocking(False)
            connections.append(s)
    return connections


def closed_by_lobby(connections):
    closed = 0
    for s in connections:
        try:
            data = s.recv(4096)
            if data == b"" or data.startswith(b"HTTP/1.1 408"):
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../.build/debug/nearplay")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    folder = tempfile.mkdtemp(prefix="lobby-attack-")
    process, port, pid = lobby(os.path.abspath(binary), folder)
    try:
        print(f"lobby pid {pid}, port {port}")
        print("idle lobby:               descriptors %d, RSS %.1f MB, health %.1f ms" % (*figures(pid), health(port)))

        idle = open_connections(port)
        time.sleep(1)
        worst = max(health(port) for _ in range(20))
        print("2,000 idle connections:   descriptors %d, RSS %.1f MB, health worst of 20 %.1f ms" % (*figures(pid), worst))
        time.sleep(10)
        print("  after 11 s the lobby had closed %d of 2,000 (head timeout 10 s)" % closed_by_lobby(idle))
        for s in idle: s.close()
        time.sleep(0.5)

        slow = open_connections(port)
        head = b"GET /v1/health HTTP/1.1\r\nHost: lobby\r\nX-Slow: " + b"a" * 64
        worst = 0.0
        for second in range(12):
            for s in slow:
                try:
                    s.send(head[second:second + 1])
                except OSError:
                    pass
            worst = max(worst, health(port))
            if second == 5:
                print("2,000 slow connections:   descriptors %d, RSS %.1f MB (after 6 s)" % figures(pid))
            time.sleep(1)
        print("  health worst while trickling %.1f ms; closed by the lobby after 12 s: %d of 2,000"
              % (worst, closed_by_lobby(slow)))
        for s in slow: s.close()
        time.sleep(0.5)
        print("after they left:          descriptors %d, RSS %.1f MB" % figures(pid))

        held = open_connections(port, count_per_address=25)
        for n, s in enumerate(held):
            if n % 3 == 1:
                s.send(b"GET /v1/health HTTP/1.1\r\nHo")
            elif n % 3 == 2:
                s.send(b"POST /v1/sessions HTTP/1.1\r\nHost: lobby\r\nContent-Length: 100\r\n\r\n{")
        time.sleep(0.5)
        started = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        process.wait(timeout=30)
        print("SIGTERM with 1,000 connections held (idle, half a head, half a body): exit %d after %.2f s"
              % (process.returncode, time.monotonic() - started))
    finally:
        if process.poll() is None:
            process.kill()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
