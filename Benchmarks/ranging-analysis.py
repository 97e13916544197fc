#!/usr/bin/env python3
"""The analyses behind Benchmarks/ranging.md that `nearplay eval` does not print itself:

1. the median absolute error per family for exponents 1.6 to 3.8, and which exponent the other
   four families would choose for the one left out (leave-one-family-out);
2. a log-normal prior on distance (the shrinkage tried and dropped);
3. the interval's coverage per family, and averaged over families, for other shadowing figures.

Usage: Benchmarks/ranging-analysis.py [NEARPLAY] [TRACE...]
(defaults: .build/debug/nearplay and ../shared/data/traces/*.jsonl). It replays every trace with
`nearplay replay --json --range-interval 0` (the defaults: Kalman filter, n = 2.8) and works on
the range events that carry truth_m. The events do not carry the measured power, so it is
recovered from the filtered RSSI and the distance (`P = rssi + 28 log10 d`, rounded to whole dBm
as advertised), and the filter's share of the interval from the interval's width; the n = 2.8 row
reproduces `nearplay eval`'s medians to the centimetre. Standard library only.
"""
import collections
import glob
import json
import math
import os
import subprocess
import sys

DEFAULT_EXPONENT, SHADOWING, EXPONENT_SPREAD = 2.8, 6.0, 0.5


def zone(metres):
    return 0 if metres < 0.5 else 1 if metres < 3 else 2


def load(nearplay, traces):
    """Per family: (loss dB, truth m, filter variance dB²) of every range event with a truth."""
    families = collections.defaultdict(list)
    for trace in traces:
        family = os.path.basename(trace).split("-")[0]
        out = subprocess.run([nearplay, "replay", "--json", "--range-interval", "0", trace],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            event = json.loads(line)
            if event.get("event") != "range" or "truth_m" not in event or "distance_hi_m" not in event:
                continue
            metres, filtered = event["distance_m"], event["rssi_filtered"]
            if metres <= 0:
                continue
            power = round(filtered + 10 * DEFAULT_EXPONENT * math.log10(metres))
            loss = power - filtered
            spread = 10 * DEFAULT_EXPONENT * math.log10(event["distance_hi_m"] / metres)
            shift = loss * EXPONENT_SPREAD / DEFAULT_EXPONENT
            filter_variance = max(0.0, spread * spread - SHADOWING ** 2 - shift * shift)
            families[family].append((loss, event["truth_m"], filter_variance))
    return families


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def distance(loss, exponent):
    return 10 ** (loss / (10 * exponent))


def main():
    nearplay = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/nearplay"
    traces = sys.argv[2:] or sorted(glob.glob("../shared/data/traces/*.jsonl"))
    families = load(nearplay, traces)
    names = sorted(families)
    print("events with truth:", ", ".join(f"{name} {len(families[name])}" for name in names))

    print("\n1. median absolute error (m) by exponent")
    exponents = [round(1.6 + 0.2 * i, 1) for i in range(12)]
    errors = {(name, n): median(abs(distance(loss, n) - truth) for loss, truth, _ in families[name])
              for name in names for n in exponents}
    print("n     " + "".join(f"{name:>9}" for name in names))
    for n in exponents:
        print(f"{n:<6}" + "".join(f"{errors[name, n]:9.3f}" for name in names))
    print("\nleft out   chosen n   its error   with n = 2.8")
    for held in names:
        chosen = min(exponents, key=lambda n: (sum(errors[name, n] for name in names if name != held), n))
        print(f"{held:<10} {chosen:8}   {errors[held, chosen]:9.3f}   {errors[held, DEFAULT_EXPONENT]:12.3f}")

    print("\n2. a log-normal prior on distance (median error m, zone accuracy)")
    for n, centre, spread in [(2.8, 1.5, None), (2.8, 1.5, 1.0), (2.8, 1.5, 0.7), (2.4, 1.5, 0.6)]:
        measurement = SHADOWING * math.log(10) / (10 * n)
        weight, prior = 1 / measurement ** 2, (1 / spread ** 2 if spread else 0.0)
        cells = []
        for name in names:
            estimates = [(math.exp((weight * math.log(distance(loss, n)) + prior * math.log(centre)) / (weight + prior)), truth)
                         for loss, truth, _ in families[name]]
            accuracy = sum(zone(e) == zone(t) for e, t in estimates) / len(estimates)
            cells.append(f"{name} {median(abs(e - t) for e, t in estimates):.2f} m {accuracy:.0%}")
        print(f"n {n}, centre {centre} m, spread {spread}: " + ", ".join(cells))

    print("\n3. interval coverage by shadowing (dB)")
    for shadowing in [5.0, 5.5, 6.0, 6.5, 7.0]:
        coverage = {}
        for name in names:
            held = 0
            for loss, truth, filter_variance in families[name]:
                shift = loss * EXPONENT_SPREAD / DEFAULT_EXPONENT
                spread = math.sqrt(shadowing ** 2 + filter_variance + shift * shift)
                held += distance(loss - spread, DEFAULT_EXPONENT) <= truth <= distance(loss + spread, DEFAULT_EXPONENT)
            coverage[name] = held / len(families[name])
        mean = sum(coverage.values()) / len(coverage)
        print(f"{shadowing}: " + ", ".join(f"{name} {value:.1%}" for name, value in coverage.items()) + f"; mean {mean:.1%}")


if __name__ == "__main__":
    main()
