#!/usr/bin/env python3
"""bis.py: callB's rounds -- per all_gather row (size, path), the mean of the four rounds' medians of each
tree, oldest first, then the smallest and largest of the four for the rows callV found over 1.05."""
import glob, re, statistics as S, sys, os
os.chdir(sys.argv[1] if len(sys.argv) > 1 else '.')
trees = "old 92dfaba d987c99 b42dec4 cf22ba0 ac551e4 new".split()
d = {}
for f in glob.glob('round*-*.txt'):
    r, t = re.match(r'round(\d)-(\w+)\.txt', f).groups()
    for l in open(f):
        p = l.split()
        if len(p) > 9 and p[0] == 'all_gather':
            d.setdefault((int(p[1]), p[7]), {}).setdefault(t, []).append(float(p[8]))
print('mean of four rounds (us); old = 716c89e, new = this commit')
print('%-20s' % 'bytes path' + ''.join('%9s' % t for t in trees))
for k in sorted(d):
    print('%-20s' % ('%d %s' % k) + ''.join('%9.2f' % S.mean(d[k][t]) for t in trees))
print('\nsmallest..largest of the four rounds')
for k in [(1024, 'direct'), (16384, 'direct'), (1024, 'pipeline'), (16384, 'pipeline')]:
    print('%-20s' % ('%d %s' % k) + ' '.join('%s %.2f..%.2f' % (t, min(d[k][t]), max(d[k][t])) for t in trees))
