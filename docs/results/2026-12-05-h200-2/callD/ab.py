#!/usr/bin/env python3
"""ab.py: DC_PDL off (rounds 1, 4) against on (rounds 2, 3): per op, mode, size and path, the
mean of each side's two medians and on/off; then per mode the geometric mean of on/off."""
import glob, math, re, collections
t = collections.defaultdict(lambda: {0: [], 1: []})
for f in sorted(glob.glob('round*-pdl*.txt')):
    pdl = int(re.search(r'pdl(\d)', f).group(1))
    for line in open(f):
        p = line.split()
        if len(p) < 9 or p[0].startswith('#') or not p[1].isdigit(): continue
        t[(p[0], p[6], int(p[1]), p[7])][pdl].append(float(p[8]))
geo = collections.defaultdict(list)
print('%-15s %-5s %10s %-24s %9s %9s %7s' % ('op', 'mode', 'bytes', 'path', 'off_us', 'on_us', 'on/off'))
for k in sorted(t):
    v = t[k]
    if not v[0] or not v[1]: continue
    a, b = sum(v[0]) / len(v[0]), sum(v[1]) / len(v[1])
    geo[k[1]].append(math.log(b / a))
    print('%-15s %-5s %10d %-24s %9.2f %9.2f %7.3f' % (k[0], k[1], k[2], k[3], a, b, b / a))
for m, x in geo.items():
    print('%s: geometric mean on/off %.3f over %d rows, min %.3f, max %.3f' % (m, math.exp(sum(x) / len(x)), len(x), math.exp(min(x)), math.exp(max(x))))
