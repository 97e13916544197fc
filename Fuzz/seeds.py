"""Writes the seed inputs of each fuzz target into CORPUS/<target>/ (scripts/fuzz runs this).

Seeds come from the shared recordings and test vectors (SHARED, ../shared/data) and from small
hand-made inputs for the formats nothing records (D-Bus bodies, IIO scans, recordings, requests).
"""
import hashlib, json, os, struct, sys

corpus, shared = sys.argv[1], sys.argv[2]


def seed(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = os.path.join(corpus, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def btsnoop_records(path):
    data = open(path, "rb").read()
    offset = 16
    while offset + 24 <= len(data):
        included = struct.unpack(">I", data[offset + 4:offset + 8])[0]
        yield data[offset + 24:offset + 24 + included]
        offset += 24 + included


# Frames and events: the shared test vectors, by kind.
for vector in json.load(open(os.path.join(shared, "frame-vectors.json"))):
    raw = bytes.fromhex(vector["hex"])
    kind = vector["input_kind"]
    if kind in ("ad", "scan_record"):
        seed("ad-structures", raw)
    elif kind == "manufacturer_data":
        seed("ad-structures", raw)
    elif kind in ("eddystone_url_field", "eddystone_frame"):
        seed("ad-structures", raw)
    elif kind == "hci_event":
        seed("hci-events", raw)

# A real capture: the file itself (cut to 4 KB: libFuzzer's -max_len) and its HCI events.
capture = os.path.join(shared, "captures", "horizon74_btsnoop_hci.log")
whole = open(capture, "rb").read()
seed("btsnoop", whole[:4096])
for record in list(btsnoop_records(capture))[:64]:
    seed("hci-events", record)

# Traces: the first lines of each family's first recording.
traces = os.path.join(shared, "traces")
seen = set()
for name in sorted(os.listdir(traces)):
    family = name.split("-")[0]
    if not name.endswith(".jsonl") or family in seen:
        continue
    seen.add(family)
    with open(os.path.join(traces, name), "rb") as f:
        seed("trace-lines", b"".join(f.readline() for _ in range(12)))

# D-Bus bodies: signature length, signature, little-endian body (see dbus-messages.swift).
def dbus(signature, body):
    seed("dbus-messages", bytes([len(signature)]) + signature.encode() + body)

def dstring(text, at):
    pad = (-at) % 4
    raw = text.encode()
    return b"\0" * pad + struct.pack("<I", len(raw)) + raw + b"\0"

dbus("s", dstring("org.bluez.Device1", 0))
dbus("u", struct.pack("<I", 7))
# PropertiesChanged(s, a{sv}, as) with RSSI: n = -63 and an empty invalidated list.
interface = dstring("org.bluez.Device1", 0)
entry = dstring("RSSI", 0) + b"\x01n\0" + struct.pack("<h", -63)
array = struct.pack("<I", len(entry)) + b"\0" * 4 + entry
body = interface + b"\0" * ((-len(interface)) % 4) + array
body += b"\0" * ((-len(body)) % 4) + struct.pack("<I", 0)
dbus("sa{sv}as", body)
# ManufacturerData a{qv} with an iBeacon payload (ay).
payload = bytes.fromhex("0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
inner = struct.pack("<H", 0x004C) + b"\x02ay\0" + struct.pack("<I", len(payload)) + payload
dbus("a{qv}", struct.pack("<I", len(inner)) + b"\0" * 4 + inner)

# IIO: scan_elements lines, a zero byte, then scans.
seed("iio-scan", b"in_accel_x 0 le:s16/16>>0\nin_accel_y 1 le:s16/16>>0\nin_accel_z 2 le:s16/16>>0\n"
     b"in_timestamp 3 le:s64/64>>0\n\0" + bytes(range(32)) * 2)
seed("iio-scan", b"in_accel_x 0 be:s12/16>>4\nin_accel_y 1 be:s12/16>>4\nin_accel_z 2 be:s12/16>>4\n\0" + bytes(range(18)))
seed("iio-scan", b"in_accel_x 0 le:u8/8X3>>0\n\0" + bytes(9))

# Recordings as a score submission carries them.
seed("score-submissions", json.dumps({
    "game": "shaker", "duration": 1.0,
    "levels": [],
    "accelerations": [{"t": i / 100, "x": (i % 7) - 3.0, "y": 0.1, "z": 9.81} for i in range(100)],
    "calibration": {"accelerometer": {"device": "iio:device0", "rest_ms2": [0, 0, 9.81],
                                      "gravity_ms2": 9.81, "gravity_offset_ms2": 0, "noise_ms2": 0.02}},
}))
seed("score-submissions", json.dumps({
    "game": "screamer", "duration": 0.5,
    "levels": [{"t": i / 20, "rms_dbfs": -30 + i, "peak_dbfs": -20 + i, "overruns": 0} for i in range(10)],
    "accelerations": [],
    "calibration": {"microphone": {"pcm": "default", "noise_floor_dbfs": -60}},
}))
seed("score-submissions", json.dumps({"game": "quickdraw", "duration": 3, "signal_time": 1.5,
                                       "levels": [], "accelerations": [], "calibration": {}}))

# Lines on the agent's socket.
for line in ['{"verb":"nearby"}', '{"verb":"invite","players":["bob","carol"]}', '{"verb":"accept","id":3}',
             '{"verb":"events","recent":10}', '{"verb":"tournaments","location":2}',
             '{"ok":true,"result":{"players":[]}}', '{"ok":false,"error":{"code":"badRequest","message":"x"}}']:
    seed("agent-requests", line)
