#!/usr/bin/env python3
"""Fits the range events' interval (FittedSpread, Sources/Ranging) on the development families.

    python3 Benchmarks/ranging-interval-fit.py [--fit] [TRACES_DIR]
    python3 Benchmarks/ranging-interval-fit.py --held-out [--variant=table|balanced|knots4|knots4-balanced] [TRACES_DIR]
    python3 Benchmarks/ranging-interval-fit.py --half-split [--by-segment] [TRACES_DIR]

Rebuilds, for every range event `nearplay eval` scores (one per sighting, default settings), the
tracker's state beside it: the following filter (slow and fast Kalman, restart rule), the running
reading variance and the track's readings. A track ends after 30 s of silence here; with that the
stand-in reproduces eval's range counts and today's coverage per family exactly (56/79/57/91/59 %).

Without --fit it prints coverage by family and by band of true distance, and the median width
ratio (hi/lo), for the symmetric interval of before and for FittedSpread.developmentFamilies, and
what forcing the 8-16 m band to 58 % would cost. With --fit it refits the table by coordinate
descent (a few minutes): targets 63-73 % on every family and on every band with >= 500 ranges
except 8-16 m (see Benchmarks/ranging.md, "The interval"), plus a small penalty on median width
and on jumps between knots.

--held-out asks how the table does on data it was not fitted on (Benchmarks/ranging.md, "The
interval on data it was not fitted on"). For each family it fits the table on the other four
(the same targets and penalties, counted over the four: their families and their bands with
>= 500 ranges) and scores it on the one left out, by family, by band of that family's ranges, on
its ranges at 1-19 m and pooled by band; beside it the shipped table and a fit on all five made
the same way. Every fit here starts blind (fit_blind: 3, 10 and 20 dB on every knot, the best of
the three), not from the shipped table, which has seen all five. It also prints the
readings' offset from the default line per family and band (why a family strays) and what a
constant margin over the held-out tables would do. --variant refits with fewer knots (0.25, 1,
4, 16 m) and/or family-balanced band targets (each family weighs alike in a band's coverage).
18 descents of 25-45 s each (13-19 minutes on a busy 2-core machine).

--half-split fits on the first half (by time) of every recording's ranges and scores on the
second half, and the other way round. The recordings step through their distances in order, so
those halves hold different distances; --by-segment halves each stretch at one true distance
instead (the same distances, later in time). About 4 minutes.
"""
import glob, json, os, sys, time
import numpy as np

N = 2.8                      # default exponent
Q, R, QF = 0.2, 32.0, 20.0   # following filter: slow q, r, fast q (RSSIFilterKind.defaultFollowing)
FAMILIES = ['airtag', 'elanfer', 'herald', 'nist', 'pcng']
BANDS = ['<1 m', '1-2 m', '2-4 m', '4-8 m', '8-16 m', '>=16 m']
KNOT_METRES = np.array([0.25, 0.5, 1, 2, 4, 8, 16])
# FittedSpread.developmentFamilies
NEARER = np.array([17.5, 15, 7.5, 0, 0, 0.5, 0.5])
FARTHER = np.array([22, 10, 3, 13.5, 15, 13, 13])
FEW, FEW_SCALE = 4.0, 8.0


def replay(directory):
    rows, files = [], []
    for path in sorted(glob.glob(os.path.join(directory, '*.jsonl'))):
        family = os.path.basename(path).split('-')[0]
        if family not in FAMILIES:
            continue
        with open(path) as f:
            power = float(json.loads(f.readline())['measured_power_dbm'])
            tracks = {}
            for line in f:
                r = json.loads(line)
                x, truth = r.get('rssi'), r.get('truth_m')
                if x is None or not -127 <= x <= -1:
                    continue
                key, t, x = (r.get('rx'), r['ad']), r['t'], float(x)
                s = tracks.get(key)
                if s is None or t - s['last'] > 30:
                    s = tracks[key] = dict(e=x, v=R, fe=x, fv=R, last=t, n=0, rv=16.0, dis=0, since=0.0, above=False)
                else:
                    dt = max(0.0, t - s['last'])
                    p = s['v'] + Q * dt; g = p / (p + R); s['e'] += g * (x - s['e']); s['v'] = (1 - g) * p
                    p = s['fv'] + QF * dt; g = p / (p + R); s['fe'] += g * (x - s['fe']); s['fv'] = (1 - g) * p
                    gap = s['fe'] - s['e']
                    if gap * gap > 9 * s['fv']:
                        if s['dis'] == 0 or s['above'] != (gap > 0):
                            s['dis'], s['since'], s['above'] = 0, t, gap > 0
                        s['dis'] += 1
                        if s['dis'] >= 3 and t - s['since'] >= 2:
                            s['e'], s['v'], s['dis'] = s['fe'], s['fv'], 0
                    else:
                        s['dis'] = 0
                s['last'] = t; s['n'] += 1
                s['rv'] += 0.05 * ((x - s['e']) ** 2 - s['rv'])
                if truth is not None:
                    rows.append((FAMILIES.index(family), truth, power - s['e'], s['v'] * s['rv'] / R, s['n'], len(files), t))
            files.append(os.path.basename(path))
    return np.array(rows), files


def events(data, knot_metres=KNOT_METRES):
    """The range events as arrays, with each one's place in the table (knot j, weight w toward j + 1)."""
    family, truth, loss, fvar, readings, file, t = data.T
    knots = 10 * N * np.log10(knot_metres)
    clipped = np.clip(loss, knots[0], knots[-1])
    j = np.clip(np.searchsorted(knots, clipped) - 1, 0, len(knots) - 2)
    w = (clipped - knots[j]) / (knots[j + 1] - knots[j])
    return dict(family=family, truth=truth, logt=np.log10(np.maximum(truth, 1e-12)), loss=loss, fvar=fvar,
                readings=readings, file=file, t=t, band=np.searchsorted([1, 2, 4, 8, 16], truth, side='right'), j=j, w=w)


def subset(ev, mask):
    return {k: v[mask] for k, v in ev.items()}


def groups(ev):
    """What the targets are counted on: each family present, each band with >= 500 ranges."""
    g = [(f, ev['family'] == i) for i, f in enumerate(FAMILIES) if (ev['family'] == i).any()]
    return g + [(b, ev['band'] == i) for i, b in enumerate(BANDS) if (ev['band'] == i).sum() >= 500]


def fitted(ev, nearer, farther, few=FEW, scale=FEW_SCALE, extra=0.0):
    """Whether each event's interval holds the truth, and its width (log10 hi/lo). `extra` dB is
    added in quadrature to both sides (a constant margin over the table)."""
    j, w, fvar = ev['j'], ev['w'], ev['fvar'] + extra ** 2
    sn = np.sqrt(fvar + (nearer[j] * (1 - w) + nearer[j + 1] * w) ** 2)
    sf = np.sqrt(fvar + (farther[j] * (1 - w) + farther[j + 1] * w) ** 2 + few ** 2 * np.minimum(1, scale / ev['readings']))
    lo, hi = (ev['loss'] - sn) / (10 * N), (ev['loss'] + sf) / (10 * N)
    held = (ev['logt'] <= hi) & ((ev['logt'] >= lo) | (lo <= -1))   # a lower end within 10 cm is 0
    return held, hi - lo


def cost(ev, grps, weights, table, low=0.63, high=0.73):
    held, width = fitted(ev, *table)
    c = 0.0
    for n, g in grps:
        if n == '8-16 m':
            continue
        m = held[g].mean() if weights is None or n in FAMILIES else np.average(held[g], weights=weights[g])
        c += max(0, low - m) ** 2 + max(0, m - high) ** 2
    nearer, farther = table[0], table[1]
    return 1e4 * c + 3 * np.median(width) + 0.02 * (np.sum(np.diff(nearer) ** 2) + np.sum(np.diff(farther) ** 2))


def balance(ev):
    counts = np.bincount(ev['family'].astype(int), minlength=len(FAMILIES))
    return 1.0 / counts[ev['family'].astype(int)]


def fit(ev, nearer, farther, few, scale, balanced=False, rounds=4):
    """Coordinate descent from the given table: targets 63-73 % on every family of `ev` and every
    band with >= 500 ranges but 8-16 m, a small penalty on the median width and on jumps between
    knots. `balanced`: a band's coverage counts each family alike (each event weighs 1 / its
    family's events) instead of each event alike."""
    nearer, farther = np.array(nearer, float), np.array(farther, float)
    grps = groups(ev)
    weights = balance(ev) if balanced else None
    c = lambda n, f, fw, sc: cost(ev, grps, weights, (n, f, fw, sc))
    for _ in range(rounds):
        for side in (nearer, farther):
            for k in range(len(side)):
                best = min((c(nearer, farther, few, scale), side[k]) for side[k] in list(np.arange(0, 30.5, 0.5)))
                side[k] = best[1]
        few = min((c(nearer, farther, v, scale), v) for v in [0, 2, 4, 6, 8, 12, 16])[1]
        scale = min((c(nearer, farther, few, v), v) for v in [2, 4, 8, 16, 32])[1]
    return nearer, farther, few, scale


def describe(table, knot_metres):
    nearer, farther, few, scale = table
    return ('knots ' + ' '.join(f'{m:g}' for m in knot_metres) + ' m: nearer ' + ' '.join(f'{v:g}' for v in nearer)
            + ' | farther ' + ' '.join(f'{v:g}' for v in farther) + f' | few {few:g} scale {scale:g}')


def pct(held, mask):
    return f'{held[mask].mean() * 100:3.0f} %' if mask.any() else '    -'


def hilo(width, mask):
    return f'{np.median(10 ** width[mask]):.2f}' if mask.any() else '-'


def misfit(ev):
    """Why a family strays: how far its readings' loss sits from the default line, by band
    (median and 16th / 84th percentile of loss - 28 log10 d, dB; negative reads nearer than it is)."""
    print('the readings against the default line: loss - 10 n log10 d (dB), median [16th, 84th percentile], by band')
    print('  ' + ' ' * 8 + ''.join(f'{b:>21s}' for b in BANDS))
    for i, f in enumerate(FAMILIES):
        cells = []
        for b in range(len(BANDS)):
            m = (ev['family'] == i) & (ev['band'] == b) & (ev['truth'] > 0)
            r = ev['loss'][m] - 10 * N * ev['logt'][m]
            cells.append(f'{np.median(r):+6.1f} [{np.percentile(r, 16):+5.1f},{np.percentile(r, 84):+5.1f}]' if m.sum() >= 50 else '-')
        m = (ev['family'] == i) & (ev['truth'] > 0)
        slope, icept = np.polyfit(10 * ev['logt'][m], ev['loss'][m], 1)
        print(f'  {f:8s}' + ''.join(f'{c:>21s}' for c in cells) + f'   loss ~ {slope:.1f}·10log10 d {icept:+.1f}')


VARIANTS = {   # name -> (knots in metres, family-balanced band targets)
    'table': (KNOT_METRES, False),
    'balanced': (KNOT_METRES, True),
    'knots4': (np.array([0.25, 1, 4, 16]), False),
    'knots4-balanced': (np.array([0.25, 1, 4, 16]), True),
}


STARTS = (3, 10, 20)   # dB on every knot, both sides


def fit_blind(ev, knot_metres, balanced=False, rounds=4):
    """The fit as a family it has not seen would meet it: coordinate descent from starts that know
    nothing of the families (the same spread on every knot, both sides: 3, 10 and 20 dB; no
    few-readings term), keeping the one with the lowest cost. One start is not enough: from 0 or
    6 dB the descent stalls at costs near 200 (2-4 m at 79-86 %); from 3, 10, 15 or 20 dB on all
    five it reaches 27-35, as the shipped table's 27."""
    best = None
    for c in STARTS:
        table = fit(ev, np.full(len(knot_metres), float(c)), np.full(len(knot_metres), float(c)), 0.0, 8.0, balanced, rounds)
        value = cost(ev, groups(ev), balance(ev) if balanced else None, table)
        if best is None or value < best[0]:
            best = (value, table)
    return best[1]


def held_out(data, variant, rounds):
    """Leave one family out: fit on the other four, score on the one left out."""
    knot_metres, balanced = VARIANTS[variant]
    ev = events(data, knot_metres)
    shipped_ev = events(data)
    shipped = (NEARER, FARTHER, FEW, FEW_SCALE)
    misfit(ev)
    print(f'\nvariant {variant}, {rounds} rounds of coordinate descent from each of the family-blind starts')
    t0 = time.time()
    five = fit_blind(ev, knot_metres, balanced, rounds)
    print(f'fitted on all five ({time.time() - t0:.0f} s): ' + describe(five, knot_metres))
    in_held, in_width = fitted(ev, *five)
    sh_held, sh_width = fitted(shipped_ev, *shipped)
    out_held, out_width = np.zeros(len(ev['truth']), bool), np.zeros(len(ev['truth']))
    tables = {}
    for i, f in enumerate(FAMILIES):
        t0 = time.time()
        tables[f] = fit_blind(subset(ev, ev['family'] != i), knot_metres, balanced, rounds)
        print(f'without {f} ({time.time() - t0:.0f} s): ' + describe(tables[f], knot_metres))
        test = ev['family'] == i
        h, wd = fitted(subset(ev, test), *tables[f])
        out_held[test], out_width[test] = h, wd
    print('\ncoverage of the family (median hi/lo): shipped table | fitted on all five | fitted on the other four')
    for i, f in enumerate(FAMILIES):
        m = ev['family'] == i
        print(f'  {f:8s} {pct(sh_held, m)} ({hilo(sh_width, m)})  {pct(in_held, m)} ({hilo(in_width, m)})'
              f'  {pct(out_held, m)} ({hilo(out_width, m)})')
    print('by band of the family left out (ranges; * = under 500): shipped | all five | other four, median hi/lo of the last')
    for i, f in enumerate(FAMILIES):
        for b, name in enumerate(BANDS):
            m = (ev['family'] == i) & (ev['band'] == b)
            if m.any():
                print(f'  {f:8s} {name:7s} {m.sum():6d}{"*" if m.sum() < 500 else " "}  {pct(sh_held, m)}  {pct(in_held, m)}'
                      f'  {pct(out_held, m)}  ({hilo(out_width, m)})')
    print('ranges at 1-19 m of the family left out (the span of the unseen long-range family): shipped | all five | other four')
    for i, f in enumerate(FAMILIES):
        m = (ev['family'] == i) & (ev['truth'] >= 1) & (ev['truth'] <= 19)
        print(f'  {f:8s} {m.sum():6d}  {pct(sh_held, m)}  {pct(in_held, m)}  {pct(out_held, m)}  ({hilo(out_width, m)})')
    print('pooled by band, each family scored with the table fitted without it: shipped | all five | other four')
    for b, name in enumerate(BANDS):
        m = ev['band'] == b
        print(f'  {name:7s} {m.sum():6d}  {pct(sh_held, m)}  {pct(in_held, m)}  {pct(out_held, m)}  ({hilo(out_width, m)})')
    print('a constant margin over the held-out tables (dB in quadrature, both sides): family coverage held out'
          ' | in sample (all-five table), min-max over families and bands with >= 500 ranges but 8-16 m')
    for extra in [0, 2, 4, 6, 8]:
        h = np.zeros(len(ev['truth']), bool)
        for i, f in enumerate(FAMILIES):
            test = ev['family'] == i
            h[test] = fitted(subset(ev, test), *tables[f], extra=extra)[0]
        ih, iw = fitted(ev, *five, extra=extra)
        ins = [ih[g].mean() * 100 for n, g in groups(ev) if n != '8-16 m']
        print(f'  +{extra} dB: ' + '  '.join(f'{f} {h[ev["family"] == i].mean() * 100:.0f}' for i, f in enumerate(FAMILIES))
              + f'  | in sample {min(ins):.0f}-{max(ins):.0f} %, median hi/lo {np.median(10 ** iw):.2f}')


def half_split(data, files, rounds, by_segment=False):
    """Within families: each recording's ranges in time order, first half against second half. The
    recordings step through their distances in order, so these halves differ in distance (pcng's
    first halves hold all its < 1 m, its second all its 2-8 m). With `by_segment` each stretch of
    a recording at one true distance is halved instead: the same distances, later in time."""
    ev = events(data)
    first = np.zeros(len(ev['truth']), bool)
    keys = ev['file'] * 1e4 + ev['truth'] if by_segment else ev['file']
    for key in np.unique(keys):
        idx = np.flatnonzero(keys == key)
        idx = idx[np.argsort(ev['t'][idx], kind='stable')]
        first[idx[:len(idx) // 2]] = True
    print('halves of each ' + ('stretch at one distance' if by_segment else 'recording'))
    print('bands of each half (ranges): first | second')
    for i, f in enumerate(FAMILIES):
        m = ev['family'] == i
        print(f'  {f:8s} ' + '  '.join(f'{name} {(m & first & (ev["band"] == b)).sum()}|{(m & ~first & (ev["band"] == b)).sum()}'
                                       for b, name in enumerate(BANDS) if (m & (ev['band'] == b)).any()))
    shipped = fitted(ev, NEARER, FARTHER, FEW, FEW_SCALE)
    for name, train in (('first', first), ('second', ~first)):
        t0 = time.time()
        table = fit_blind(subset(ev, train), KNOT_METRES, rounds=rounds)
        print(f'\nfitted on the {name} halves ({time.time() - t0:.0f} s): ' + describe(table, KNOT_METRES))
        held, width = fitted(ev, *table)
        print(f'coverage: shipped table on the other halves | this fit on the {name} halves (in sample) | on the other halves (held out), its median hi/lo')
        for b, bn in [(f, None) for f in FAMILIES] + [(None, b) for b in range(len(BANDS))]:
            g = ev['family'] == FAMILIES.index(b) if bn is None else ev['band'] == bn
            label = b if bn is None else BANDS[bn]
            few = '  (* under 500 held out)' if bn is not None and (g & ~train).sum() < 500 else ''
            print(f'  {label:8s} {(g & train).sum():6d}|{(g & ~train).sum():6d}  {pct(shipped[0], g & ~train)}  {pct(held, g & train)}'
                  f'  {pct(held, g & ~train)}  ({hilo(width, g & ~train)}){few}')


def main():
    flags = {'--fit', '--held-out', '--half-split', '--by-segment'}
    args = [a for a in sys.argv[1:] if a not in flags and not a.startswith('--variant=') and not a.startswith('--rounds=')]
    variant = next((a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--variant=')), 'table')
    rounds = int(next((a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--rounds=')), 4))
    data, files = replay(args[0] if args else '../shared/data/traces')
    if '--held-out' in sys.argv:
        return held_out(data, variant, rounds)
    if '--half-split' in sys.argv:
        return half_split(data, files, rounds, '--by-segment' in sys.argv)
    fit_ = '--fit' in sys.argv
    ev = events(data)
    truth, loss, fvar, band, logt = ev['truth'], ev['loss'], ev['fvar'], ev['band'], ev['logt']
    grps = groups(ev)

    def symmetric():
        s = np.sqrt(36 + fvar + (loss * 0.5 / N) ** 2)
        held = (truth > 0) & (np.abs(logt - loss / (10 * N)) <= s / (10 * N))
        return held, 2 * s / (10 * N)

    def show(name, held, width):
        print(name)
        print('  ' + '  '.join(f'{f} {held[g].mean() * 100:.0f} %' for f, g in grps if f in FAMILIES))
        for i, b in enumerate(BANDS):
            m = band == i
            if m.any():
                print(f'  {b:7s} {m.sum():6d} ranges  coverage {held[m].mean() * 100:3.0f} %  median hi/lo {np.median(10 ** width[m]):.2f}')
        print(f'  all: median hi/lo {np.median(10 ** width):.2f}')

    show('before: symmetric, 6 dB shadowing, dn = 0.5', *symmetric())
    nearer, farther, few, scale = NEARER.copy(), FARTHER.copy(), FEW, FEW_SCALE
    if fit_:
        nearer, farther, few, scale = fit(ev, nearer, farther, few, scale)
        print('fitted: nearer', nearer.tolist(), 'farther', farther.tolist(), 'few', few, 'scale', scale)
    show('after: FittedSpread', *fitted(ev, nearer, farther, few, scale))
    print('8-16 m at 58 % would need the farther side at >= 1 m widened (in quadrature) by:')
    for extra in [4, 8, 12, 16]:
        wide = farther.copy(); wide[2:] = np.sqrt(wide[2:] ** 2 + extra ** 2)
        held, width = fitted(ev, nearer, wide, few, scale)
        print(f'  +{extra:2d} dB: ' + '  '.join(f'{n} {held[g].mean() * 100:.0f}' for n, g in grps)
              + f'  median hi/lo {np.median(10 ** width):.2f}')


if __name__ == '__main__':
    main()
