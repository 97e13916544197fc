#!/usr/bin/env python3
"""Crowd calibration, a prototype: what readings between devices that hear each other can tell
about each device's transmit and receive offsets and the site's path-loss exponent.

Model (docs/ranging.md, "Two-way ranging"): A hears B at
    r_AB = P_B + t_B + g_A - 10 n log10(d_AB) - S_AB + e      (e ~ N(0, sigma) per reading)
with P the advertised measured power, t the transmit offset, g the receive offset, n the
exponent, S a lasting shadowing of the path (the same both ways) and d the distance. With
y_AB = r_AB - P_B and s = t + g, u = t - g:
    y_AB - y_BA = u_B - u_A                               (distance and shadowing cancel)
    y_AB + y_BA = s_A + s_B - 20 n log10(d) - 2 S          (needs d, or an assumption about it)
One reading's bias is t_B + g_A = (s_A + s_B)/2 + (u_B - u_A)/2.

The solver: linear least squares over the pair-level statistics, with the defaults as priors
(t, g ~ 0 +- 6 dB, n ~ 2.8 +- 0.5), Huber-reweighted, and a posterior covariance that says
what the data pinned down. Equations:
  * every pair: the mean difference of its exchanges (both directions within one second);
  * a pair at a known distance (location beacons whose owner entered where they stand): the
    mean sum, with the path's shadowing as its noise;
  * a pair of mingling players (distance unknown): the mean sum against c, the crowd's mean path
    loss (a free parameter), with `mingling` dB for how far one pair's mean loss may stray
    from the crowd's (the assumption that everyone mingles alike; None leaves it out).

What is identifiable (and what this prints, 10 rooms, Benchmarks/ranging.md has the table):
  * never: the gauge t + k, g - k of all devices at once (no reading changes); the prior fixes it,
    and it cancels in every reading's bias t_B + g_A.
  * players with unknown distances, differences alone: u_A - u_B only. s and n stay at the prior.
  * + the mingling assumption (every pair's mean path loss is the crowd's, within tau): s_A - s_B
    too. The common mode of s (everyone reads 3 dB low) and n are not: the prior holds them, and
    a shared bias the prior does not expect goes straight into every offset.
  * + an anchor (one device of known t, g): the common mode of s, through the mingling sums.
  * + location beacons at known mutual distances: n and the beacons' own s. Not the players' s:
    no player distance is known, so nothing ties the players' common mode to the beacons'.
  * n from unknown distances alone would need the room's geometry (or trilateration of 2-D
    positions from 66 pair losses at once, which the flat model here does not attempt).

Usage: python3 Benchmarks/crowd-calibration.py [seeds]   (numpy only; about 40 s for 10)
       python3 Benchmarks/crowd-calibration.py --recordings ../shared/data/traces
Variants, each over `seeds` rooms, print offset errors (t + g, t, g), exponent error and the
one-way median error calibrated / uncalibrated, scored on a separate still snapshot.
"""
import sys
import numpy as np

NOMINAL = -59.0
SENSITIVITY = -100.0


def simulate(rng, players=12, beacons=(), spread=8.0, sigma=4.0, loss=0.1, seconds=600, room=8.0,
             shadowing=0.0, exponent=None, common=0.0):
    """Readings at 1 Hz while `players` random-walk in a square room and `beacons` (positions)
    stand still. Returns truth and a list of exchanges (a, b, y_ab or nan, y_ba or nan)."""
    m = players + len(beacons)
    n = rng.uniform(2.0, 3.5) if exponent is None else exponent
    # `common` dB added to every device's t and g: a bias the devices share (bodies, one model).
    t = rng.uniform(-spread, spread, m) + common
    g = rng.uniform(-spread, spread, m) + common
    # Players walk toward random targets at 0.3-1.2 m/s; beacons stay put.
    pos = np.empty((seconds, m, 2))
    p = rng.uniform(0, room, (players, 2))
    target = rng.uniform(0, room, (players, 2))
    speed = rng.uniform(0.3, 1.2, players)
    for k in range(seconds):
        step = target - p
        dist = np.linalg.norm(step, axis=1)
        arrived = dist < speed
        p = np.where(arrived[:, None], target, p + step / np.maximum(dist, 1e-9)[:, None] * speed[:, None])
        target[arrived] = rng.uniform(0, room, (arrived.sum(), 2))
        pos[k, :players] = p
        pos[k, players:] = np.array(beacons).reshape(-1, 2)
    # Lasting shadowing per unordered path: only between still devices (beacons), whose path
    # does not change; a moving pair's shadowing changes as it moves and is part of the noise.
    shade = np.zeros((m, m))
    for a in range(players, m):
        for b in range(a + 1, m):
            shade[a, b] = shade[b, a] = rng.normal(0, shadowing) if shadowing else 0
    iu = np.triu_indices(m, 1)
    ex = []
    for k in range(seconds):
        d = np.linalg.norm(pos[k][:, None] - pos[k][None], axis=2)
        pl = 10 * n * np.log10(np.maximum(d, 0.1)) + shade
        r = NOMINAL + t[None, :] + g[:, None] - pl + rng.normal(0, sigma, (m, m))  # r[a, b]: a hears b
        r = np.round(r)
        heard = (rng.random((m, m)) > loss) & (r >= SENSITIVITY)
        y = np.where(heard, r - NOMINAL, np.nan)
        for a, b in zip(*iu):
            if heard[a, b] or heard[b, a]:
                ex.append((a, b, y[a, b], y[b, a], k))
    ex = np.array(ex)
    return dict(n=n, t=t, g=g, players=players, m=m, pos=pos, ex=ex, shade=shade)


def solve(world, known_distance=False, mingling=3.0, sigma=4.0, shadowing=4.0, anchor=None,
          prior_n=(2.8, 0.5), prior_offset=6.0, asymmetry=1.0, huber=1.5, iterations=10):
    """Posterior mean and covariance of [t (m), g (m), n, c]."""
    m, players, ex = world["m"], world["players"], world["ex"]
    N = 2 * m + 2
    rows, rhs, var = [], [], []

    def eq(coef, value, variance):
        row = np.zeros(N)
        for i, v in coef:
            row[i] += v
        rows.append(row); rhs.append(value); var.append(variance)

    T, G, NI, CI = (lambda i: i), (lambda i: m + i), 2 * m, 2 * m + 1
    crowd = []  # the mingling pairs' sum equations: their variance gets 4 tau^2 below
    for a in range(m):
        for b in range(a + 1, m):
            sel = ex[(ex[:, 0] == a) & (ex[:, 1] == b)]
            both = sel[~np.isnan(sel[:, 2]) & ~np.isnan(sel[:, 3])]
            k = len(both)
            if k == 0:
                continue
            # Difference: y_ab - y_ba = (t_b - g_b) - (t_a - g_a).
            eq([(T(b), 1), (G(b), -1), (T(a), -1), (G(a), 1)], np.mean(both[:, 2] - both[:, 3]),
               2 * sigma**2 / k + asymmetry**2)
            total = np.mean(both[:, 2] + both[:, 3])
            still = a >= players and b >= players
            if still and known_distance:
                d = np.linalg.norm(world["pos"][0, a] - world["pos"][0, b])
                # y_ab + y_ba = s_a + s_b - 20 n log10 d - 2 S
                eq([(T(a), 1), (G(a), 1), (T(b), 1), (G(b), 1), (NI, -20 * np.log10(d))], total,
                   2 * sigma**2 / k + 4 * shadowing**2)
            elif not still and a < players and b < players and mingling is not None:
                eq([(T(a), 1), (G(a), 1), (T(b), 1), (G(b), 1), (CI, -2)], total, 2 * sigma**2 / k)
                crowd.append(len(rows) - 1)
    A, y, v = np.array(rows), np.array(rhs), np.array(var)
    base = v.copy()
    # tau, how far one pair's mean path loss strays from the crowd's: `mingling` dB, or, when
    # mingling == "estimate", from the sum equations' residuals (method of moments), at least 1 dB:
    # a pair effect cannot see a device that keeps to one corner, which looks exactly like its t + g.
    tau = 3.0 if mingling == "estimate" else (mingling or 0.0)
    v[crowd] = base[crowd] + 4 * tau**2
    # Priors: offsets 0 +- prior_offset (an anchor's: its true values +- 0.5 dB), n, and a weak c.
    prior_mean = np.zeros(N); prior_sd = np.full(N, prior_offset)
    prior_mean[NI], prior_sd[NI] = prior_n
    prior_mean[CI], prior_sd[CI] = 20.0, 50.0
    if anchor is not None:
        prior_mean[T(anchor)], prior_mean[G(anchor)] = world["t"][anchor], world["g"][anchor]
        prior_sd[T(anchor)] = prior_sd[G(anchor)] = 0.5
    w = np.ones(len(y))
    for _ in range(iterations):
        W = w / v
        H = A.T @ (A * W[:, None]) + np.diag(1 / prior_sd**2)
        x = np.linalg.solve(H, A.T @ (W * y) + prior_mean / prior_sd**2)
        z = np.abs(y - A @ x) / np.sqrt(v)
        w_new = np.where(z <= huber, 1.0, huber / np.maximum(z, 1e-12))
        if mingling == "estimate" and len(crowd) > 13:
            r = (y - A @ x)[crowd]
            tau = np.sqrt(max(1.0, (np.sum(r**2) / (len(crowd) - 13) - np.mean(base[crowd])) / 4))
            v[crowd] = base[crowd] + 4 * tau**2
        elif np.allclose(w_new, w, atol=1e-4):
            break
        w = w_new
    return x, np.linalg.inv(H)


def score(world, x, rng, sigma=4.0, seconds=30, room=8.0, calibrated=True):
    """One-way median error on a still snapshot of the players (30 readings each way, averaged,
    roughly what the agent's filter gives), uncalibrated (offsets 0, n = 2.8) or with x."""
    m, players = world["m"], world["players"]
    pos = rng.uniform(0, room, (players, 2))
    errors = []
    n_hat = x[2 * m] if calibrated else 2.8
    for a in range(players):
        for b in range(players):
            if a == b:
                continue
            d = max(np.linalg.norm(pos[a] - pos[b]), 0.1)
            r = NOMINAL + world["t"][b] + world["g"][a] - 10 * world["n"] * np.log10(d) + rng.normal(0, sigma, seconds)
            mean = np.mean(np.round(r))
            bias = x[b] + x[m + a] if calibrated else 0.0
            errors.append(abs(10 ** ((NOMINAL - (mean - bias)) / (10 * n_hat)) - d))
    return np.median(errors)


VARIANTS = [
    # name, beacons, lasting shadowing between beacons (dB), common bias (dB), solver options
    ("players only, differences", 0, 0, 0, dict(mingling=None)),
    ("players only, + mingling (3 dB)", 0, 0, 0, dict(mingling=3.0)),
    ("  same, all t and g 3 dB low (shared bias)", 0, 0, -3, dict(mingling=3.0)),
    ("players only, mingling estimated", 0, 0, 0, dict(mingling="estimate")),
    ("+ one anchor (known t, g), 3 dB shared bias", 0, 0, -3, dict(mingling=3.0, anchor=0)),
    ("  same, mingling estimated", 0, 0, -3, dict(mingling="estimate", anchor=0)),
    ("+ 4 beacons, distances unknown", 4, 0, 0, dict(mingling=3.0)),
    ("+ 4 beacons at known spots, no shadowing", 4, 0, 0, dict(mingling=3.0, known_distance=True, shadowing=0.5)),
    ("+ 4 beacons at known spots, 4 dB shadowing", 4, 4, 0, dict(mingling=3.0, known_distance=True, shadowing=4.0)),
    ("+ 8 beacons at known spots, 4 dB shadowing", 8, 4, 0, dict(mingling=3.0, known_distance=True, shadowing=4.0)),
    ("anchor + 4 known beacons, shared bias, est.", 4, 4, -3, dict(mingling="estimate", anchor=0, known_distance=True, shadowing=4.0)),
]
BEACON_SPOTS = [(0.5, 0.5), (2.0, 0.5), (7.5, 0.5), (7.5, 7.5), (0.5, 4.0), (4.0, 7.5), (7.5, 3.0), (3.0, 3.0)]


def main():
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print(f"{seeds} rooms each: 12 players, t and g uniform +-8 dB, n uniform 2-3.5, 4 dB noise, 10 % loss, 10 min at 1 Hz")
    print("errors of the players' offsets (median / max over players and rooms), the posterior sd the solver publishes,")
    print("the share of errors within 2 sd, and the one-way median error calibrated / uncalibrated (median over rooms)")
    print(f"{'variant':46s} {'|t+g| med/max':>14s} {'|t| max':>7s} {'|g| max':>7s} {'sd(t+g)':>7s} {'<2sd':>5s}"
          f" {'|n err| med/max':>15s} {'sd(n)':>5s} {'ratio':>5s}")
    for name, beacon_count, shadow, common, options in VARIANTS:
        sum_err, t_err, g_err, n_err, sum_sd, n_sd, ratios, inside = [], [], [], [], [], [], [], []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            world = simulate(rng, beacons=BEACON_SPOTS[:beacon_count], shadowing=shadow, common=common)
            x, cov = solve(world, **options)
            m, P = world["m"], world["players"]
            for i in range(P):
                if options.get("anchor") == i:
                    continue
                err = abs(x[i] + x[m + i] - world["t"][i] - world["g"][i])
                sd = np.sqrt(cov[i, i] + cov[m + i, m + i] + 2 * cov[i, m + i])
                sum_err.append(err); sum_sd.append(sd); inside.append(err <= 2 * sd)
                t_err.append(abs(x[i] - world["t"][i])); g_err.append(abs(x[m + i] - world["g"][i]))
            n_err.append(abs(x[2 * m] - world["n"])); n_sd.append(np.sqrt(cov[2 * m, 2 * m]))
            inside.append(n_err[-1] <= 2 * n_sd[-1])
            before = score(world, x, np.random.default_rng(1000 + seed), calibrated=False)
            after = score(world, x, np.random.default_rng(1000 + seed))
            ratios.append(after / before)
        print(f"{name:46s} {np.median(sum_err):6.2f}/{np.max(sum_err):5.2f} {np.max(t_err):7.2f} {np.max(g_err):7.2f} "
              f"{np.median(sum_sd):7.2f} {100 * np.mean(inside):4.0f}% {np.median(n_err):7.2f}/{np.max(n_err):5.2f}"
              f" {np.median(n_sd):5.2f} {np.median(ratios):5.2f}")

# Real recordings (../shared/data/traces). Only two families have the same two devices hearing
# each other both ways: NIST (Raspberry Pi A <-> B, one session, shared clock) and pcng (phone
# pairs gryphonelab <-> HTC One M9 in four body positions, ASUS <-> N8 in two). HERALD's four
# files are four different phone pairs, each heard one way only: no difference, no shared device.
# Every file's own measured power is that direction's 1 m median, which already absorbs its
# t_B + g_A, so here every device is taken to advertise the same nominal -59 dBm instead and the
# offsets are the solve's to find. Halves: each distance block's first half of readings solves,
# its second half scores (one-way, a running mean of 10 readings, as a filter would).
TWO_WAY = {"nist": [("nist-rpi3-a", "nist-rpi3-b")]}
for body in ("hh", "hp", "pp", "bb"):
    TWO_WAY[f"pcng-{body}"] = [(f"pcng-{body}-gryphonelab", f"pcng-{body}-htconem9")]
for body in ("hb", "pb"):
    TWO_WAY[f"pcng-{body}"] = [(f"pcng-{body}-asusz00ad", f"pcng-{body}-n8")]
ONE_WAY = ["herald-pixel2", "herald-iphone6splus", "herald-galaxya10", "herald-iphone5s"]


def load(folder, name):
    import json
    lines = open(f"{folder}/{name}.jsonl").read().splitlines()
    blocks = {}
    for line in lines[1:]:
        row = json.loads(line)
        if row["truth_m"] >= 0.2:
            blocks.setdefault(row["truth_m"], []).append(row["rssi"] - NOMINAL)
    halves = {d: (np.array(v[: len(v) // 2]), np.array(v[len(v) // 2:])) for d, v in blocks.items() if len(v) >= 4}
    return halves


def fit_pair(directions, known_distance=True, shadowing=6.0, huber=1.5):
    """directions: [(listener, speaker, {d: (solve half, score half)})] over devices 0, 1.
    Returns [t0, g0, t1, g1, n] and the covariance."""
    rows, rhs, var = [], [], []
    def eq(coef, value, variance):
        row = np.zeros(5)
        for i, c in coef:
            row[i] += c
        rows.append(row); rhs.append(value); var.append(variance)
    fw = {d: h[0] for d, h in directions[0][2].items()}
    bw = {d: h[0] for d, h in directions[1][2].items()} if len(directions) > 1 else {}
    for d, a in fw.items():
        x = 10 * np.log10(d)
        if d in bw:
            b = bw[d]
            # device 0 hears 1 (a) and 1 hears 0 (b): a - b = (t1 - g1) - (t0 - g0)
            eq([(2, 1), (3, -1), (0, -1), (1, 1)], np.median(a) - np.median(b), 16 / len(a) + 16 / len(b) + 1)
            if known_distance:
                eq([(0, 1), (1, 1), (2, 1), (3, 1), (4, -2 * x)], np.median(a) + np.median(b),
                   16 / len(a) + 16 / len(b) + 4 * shadowing**2)
        elif known_distance:
            eq([(2, 1), (1, 1), (4, -x)], np.median(a), 16 / len(a) + shadowing**2)
    A, y, v = np.array(rows), np.array(rhs), np.array(var)
    prior_mean = np.array([0, 0, 0, 0, 2.8]); prior_sd = np.array([6, 6, 6, 6, 0.5])
    w = np.ones(len(y))
    for _ in range(30):
        H = A.T @ (A * (w / v)[:, None]) + np.diag(1 / prior_sd**2)
        x = np.linalg.solve(H, A.T @ (w / v * y) + prior_mean / prior_sd**2)
        z = np.abs(y - A @ x) / np.sqrt(v)
        w_new = np.where(z <= huber, 1.0, huber / np.maximum(z, 1e-12))
        if np.allclose(w_new, w, atol=1e-4):
            break
        w = w_new
    return x, np.linalg.inv(H)


def one_way_error(blocks, bias, n):
    errors = []
    for d, (_, scored) in blocks.items():
        running = np.convolve(scored, np.ones(10) / 10, mode="valid") if len(scored) >= 10 else scored
        errors += list(np.abs(10 ** (-(running - bias) / (10 * n)) - d))
    return np.median(errors)


def recordings(folder):
    print("two-way recordings: each direction's (t_B + g_A) and n solved on the first half of every distance block;")
    print("one-way median error on the second halves; 'differences' = the t - g difference alone (distances unknown)")
    print(f"{'set':9s} {'difference by distance, dB (median, spread)':>44s} {'n':>10s} {'uncal m':>8s} {'1 m cal m':>9s} {'solved m':>8s} {'ratio':>5s} {'diff only':>9s}")
    for family, pairs in TWO_WAY.items():
        for first, second in pairs:
            a, b = load(folder, first), load(folder, second)  # a: file 1 (device 0 hears 1), b: device 1 hears 0
            both = sorted(set(a) & set(b))
            per_distance = np.array([np.median(a[d][0]) - np.median(b[d][0]) for d in both])
            x, cov = fit_pair([(0, 1, a), (1, 0, b)])
            xd, _ = fit_pair([(0, 1, a), (1, 0, b)], known_distance=False)
            uncal = np.median([one_way_error(a, 0, 2.8), one_way_error(b, 0, 2.8)])
            # the recordings' own calibration: the 1 m median of each direction (the file's measured power)
            own = np.median([one_way_error(a, np.median(np.concatenate(a[1.0])) if 1.0 in a else 0, 2.8),
                             one_way_error(b, np.median(np.concatenate(b[1.0])) if 1.0 in b else 0, 2.8)])
            solved = np.median([one_way_error(a, x[2] + x[1], x[4]), one_way_error(b, x[0] + x[3], x[4])])
            diff_only = np.median([one_way_error(a, xd[2] + xd[1], 2.8), one_way_error(b, xd[0] + xd[3], 2.8)])
            print(f"{family:9s} {np.median(per_distance):+27.1f} {np.max(per_distance) - np.min(per_distance):6.1f} ({len(both):2d} d)"
                  f" {x[4]:4.2f}±{np.sqrt(cov[4, 4]):3.2f} {uncal:8.2f} {own:9.2f} {solved:8.2f} {solved / uncal:5.2f} {diff_only:9.2f}")
    print("one-way recordings (HERALD): only t_B + g_A of each pair and n, as a site calibration at every distance")
    for name in ONE_WAY:
        a = load(folder, name)
        x, cov = fit_pair([(0, 1, a)])
        uncal = one_way_error(a, 0, 2.8)
        own = one_way_error(a, np.median(np.concatenate(a[1.0])), 2.8)
        solved = one_way_error(a, x[2] + x[1], x[4])
        print(f"{name:22s} n {x[4]:4.2f}±{np.sqrt(cov[4, 4]):3.2f}  uncalibrated {uncal:5.2f} m  1 m calibration {own:5.2f} m"
              f"  solved {solved:5.2f} m  ratio {solved / uncal:4.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--recordings":
        recordings(sys.argv[2])
    else:
        main()
