"""Times bluetooth-data-tools' parse_advertisement_data_tuple (parse alone) on the same
advertising data the Swift benchmark uses, one hex payload per line of the file given."""
import sys
import time

from bluetooth_data_tools import parse_advertisement_data_tuple

payloads = [(bytes.fromhex(line.strip()),) for line in open(sys.argv[1]) if line.strip()]
best = 0.0
for round_number in range(1, 4):
    start = time.perf_counter()
    for payload in payloads:
        parse_advertisement_data_tuple(payload)
    seconds = time.perf_counter() - start
    rate = len(payloads) / seconds
    best = max(best, rate)
    print(f"round {round_number}: {rate:.0f} advertisements/s ({seconds:.3f} s)")
# Check it parsed what we think: Apple manufacturer data with the iBeacon prefix.
name, uuids, service_data, manufacturer_data, tx_power = parse_advertisement_data_tuple(payloads[0])
assert manufacturer_data[0x004C][:2] == b"\x02\x15", manufacturer_data
print(f"RESULT python_parse_ads_per_second={best:.0f} count={len(payloads)}")
