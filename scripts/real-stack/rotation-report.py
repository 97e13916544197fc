"""What a passive observer made of a rotating identity, for the real-stack check rotating-identities.

    python3 rotation-report.py --label NAME --uuid UUID --expect private|same-address IDENTITIES TRACE

IDENTITIES: the JSON lines nearplay-rotating-advertiser wrote, one per period ({"period", "major",
"minor"}). TRACE: what `nearplay record --backend hci` heard meanwhile on another controller
(trace format version 1). Prints one summary line, then each identity with the addresses it was
heard from and each address with its identities, in the order first heard.

--expect private: each identity heard, each from exactly one address and each address with
exactly one identity (the switch never mixes old and new), consecutive identities from different
addresses, every address a non-resolvable private one (top two bits 00).
--expect same-address: each identity heard, all from one and the same address: the identity
rotates, the address does not, so the periods are linkable.
Exits 0 when the expectation holds, 1 when not.
"""

import argparse
import json
import sys


def identities_in(path):
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip().startswith("{")]


def frames_in(path, uuid):
    """(time, address, (major, minor)) of every iBeacon frame under `uuid` in the trace."""
    marker = bytes.fromhex("ff4c000215") + bytes.fromhex(uuid.replace("-", ""))
    frames = []
    with open(path) as lines:
        for number, line in enumerate(lines):
            if number == 0 or not line.strip():
                continue
            record = json.loads(line)
            data = bytes.fromhex(record["ad"])
            at = data.find(marker)
            if at < 0 or at + len(marker) + 4 > len(data):
                continue
            major = int.from_bytes(data[at + len(marker):at + len(marker) + 2], "big")
            minor = int.from_bytes(data[at + len(marker) + 2:at + len(marker) + 4], "big")
            frames.append((record["t"], record["addr"], (major, minor)))
    return sorted(frames)


def kind(address):
    top = int(address.split(":")[0], 16) >> 6
    return ["non-resolvable private", "resolvable private", "reserved", "static random or public"][top]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", required=True)
    parser.add_argument("--uuid", required=True)
    parser.add_argument("--expect", choices=["private", "same-address"], required=True)
    parser.add_argument("identities")
    parser.add_argument("trace")
    arguments = parser.parse_args()

    periods = identities_in(arguments.identities)
    wanted = [(p["major"], p["minor"]) for p in periods]
    frames = frames_in(arguments.trace, arguments.uuid)
    addresses_of, identities_of, first_seen = {}, {}, {}
    for time, address, identity in frames:
        if address not in addresses_of.setdefault(identity, []):
            addresses_of[identity].append(address)
        if identity not in identities_of.setdefault(address, []):
            identities_of[address].append(identity)
        first_seen.setdefault(address, time)
    strangers = [identity for identity in addresses_of if identity not in wanted]
    heard = [identity for identity in wanted if identity in addresses_of]
    mixed = sum(1 for identities in identities_of.values() if len(identities) > 1)
    shared = sum(1 for addresses in addresses_of.values() if len(addresses) > 1)
    order = sorted(identities_of, key=lambda address: first_seen[address])
    summary = (
        f"{arguments.label}: {len(heard)} of {len(wanted)} identities heard in {len(frames)} frames, from "
        f"{len(identities_of)} addresses ({', '.join(order)}); addresses with two identities: {mixed}, "
        f"identities from two addresses: {shared}"
    )
    print(summary)
    for number, identity in enumerate(wanted):
        print(f"  period {number}: {identity[0]}/{identity[1]} from {', '.join(addresses_of.get(identity, ['(not heard)']))}")
    for address in order:
        names = ", ".join(f"{major}/{minor}" for major, minor in identities_of[address])
        print(f"  {address} ({kind(address)}): {names}")
    for identity in strangers:
        print(f"  not one of the advertiser's: {identity[0]}/{identity[1]} from {', '.join(addresses_of[identity])}")

    problems = []
    if len(wanted) < 2:
        problems.append("fewer than two periods advertised")
    if len(heard) < len(wanted):
        problems.append("not every identity was heard")
    if strangers:
        problems.append("identities under the UUID that the advertiser never had")
    if arguments.expect == "private":
        if mixed or shared:
            problems.append("an address carried two identities or an identity came from two addresses")
        owners = [addresses_of[identity][0] for identity in heard if len(addresses_of[identity]) == 1]
        if any(a == b for a, b in zip(owners, owners[1:])):
            problems.append("two consecutive identities from one address")
        if any(kind(address) != "non-resolvable private" for address in identities_of):
            problems.append("an address that is not non-resolvable private")
    else:
        if len(identities_of) != 1:
            problems.append(f"expected one address for every identity, heard {len(identities_of)}")
    for problem in problems:
        print(f"  FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
