"""The clients of Benchmarks/failover: retrying lobby clients through nginx while an instance dies.

Arguments: BASE_URL CLIENTS PIDFILE_OF_THE_INSTANCE_TO_KILL SURVIVOR_LOG LEASE_LINE RUN.
Prints one line: gap=<seconds> handover=<seconds> requests=<n> errors=<n>.
"""
import http.client
import json
import os
import signal
import sys
import threading
import time
import urllib.parse

base, clients, pidfile, survivor_log, lease_line, run = sys.argv[1:7]
clients = int(clients)
url = urllib.parse.urlparse(base)
stop = threading.Event()
lock = threading.Lock()
gaps = []
counts = {"requests": 0, "errors": 0}


def request(connection, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    data = response.read()
    return response.status, data


def client(index):
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
    name = f"r{run}c{index}"
    status, _ = request(connection, "POST", "/v1/players", {"username": name, "firstName": "F", "lastName": "O",
                                                           "email": f"{name}@example.org", "password": "password-123"})
    status, data = request(connection, "POST", "/v1/sessions", {"username": name, "password": "password-123"})
    token = json.loads(data)["token"]
    first_failure = None
    step = 0
    while not stop.is_set():
        step += 1
        try:
            if step % 2:
                status, _ = request(connection, "GET", "/v1/players/me", token=token)
            else:
                status, _ = request(connection, "PATCH", "/v1/players/me", {"timeZone": "Europe/Zurich"}, token=token)
            ok = status < 500
        except Exception:
            ok = False
            connection.close()
            connection = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
        with lock:
            counts["requests"] += 1
            if not ok:
                counts["errors"] += 1
        if ok:
            if first_failure is not None:
                with lock:
                    gaps.append(time.monotonic() - first_failure)
                first_failure = None
            time.sleep(0.005)
        else:
            if first_failure is None:
                first_failure = time.monotonic()
            time.sleep(0.02)


threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
for thread in threads:
    thread.start()
time.sleep(3)
killed = time.monotonic()
os.kill(int(open(pidfile).read().strip()), signal.SIGKILL)
handover = None
while time.monotonic() - killed < 30:
    if lease_line in open(survivor_log, encoding="utf-8").read():
        handover = time.monotonic() - killed
        break
    time.sleep(0.01)
time.sleep(4)
stop.set()
for thread in threads:
    thread.join()
print(f"gap={max(gaps) if gaps else 0:.3f} handover={handover if handover is not None else -1:.3f} "
      f"requests={counts['requests']} errors={counts['errors']}")
