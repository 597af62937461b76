#!/usr/bin/env python3
"""ab.py: eager all_reduce, 716c89e's bench and library (rounds *-old) against this commit's (*-new), eight
alternating rounds: each round's launch floor, then per size and path the medians of the four rounds of each
side, new/old of their means, and new minus old of the time above each round's floor."""
import glob, re, collections, statistics as S
t = collections.defaultdict(dict); fl = {}
for f in sorted(glob.glob('round*-*.txt')):
    r = int(re.search(r'round(\d+)', f).group(1)); who = re.search(r'-(old|new)\.txt', f).group(1)
    for l in open(f):
        if l.startswith('# launch floor'): fl[r] = (who, float(l.split('eager ')[1].split()[0]))
        p = l.split()
        if len(p) < 9 or p[0].startswith('#') or not p[1].isdigit(): continue
        t[(int(p[1]), p[7])][r] = float(p[8])
for r in sorted(fl): print('round %d %s: launch floor %.2f us' % (r, fl[r][0], fl[r][1]))
for k in sorted(t):
    v = t[k]
    side = {w: [r for r in sorted(v) if fl[r][0] == w] for w in ('old', 'new')}
    m = {w: S.mean(v[r] for r in side[w]) for w in side}
    above = {w: S.mean(v[r] - fl[r][1] for r in side[w]) for w in side}
    print('%8d %-20s old %s  new %s  new/old %.3f  above the floor: new - old %+.2f us' % (k[0], k[1],
          ' '.join('%.2f' % v[r] for r in side['old']), ' '.join('%.2f' % v[r] for r in side['new']),
          m['new'] / m['old'], above['new'] - above['old']))
