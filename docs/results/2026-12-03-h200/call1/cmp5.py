# new/old per (op, offset, path, size): each library's lower median of its two runs
import glob, re, collections, math, sys
t = collections.defaultdict(dict)
for f in glob.glob('bench-*.txt'):
    m = re.match(r'bench-(\w+)-o(\d+)-(old|new)-(\d)\.txt', f)
    op, off, lib = m.group(1), int(m.group(2)), m.group(3)
    for l in open(f):
        if l.startswith('#') or not l.strip(): continue
        w = l.split()
        if w[5] != 'detcoll': continue
        key = (op, off, w[7].split('=')[0] if not w[7].startswith('auto') else 'auto', int(w[1]))
        v = float(w[8])
        t[key][lib] = min(v, t[key].get(lib, 1e18))
        if int(w[14]) != 0: print('WRONG', f, l)
groups = collections.defaultdict(list)
for k, d in t.items():
    if 'old' in d and 'new' in d: groups[k[:3]].append((k[3], d['new'] / d['old'], d['old'], d['new']))
print('%-15s %3s %-12s %5s %7s %7s %7s  %s' % ('op', 'off', 'path', 'n', 'geomean', 'best', 'worst', 'worst size (old us -> new us)'))
for g in sorted(groups):
    r = sorted(groups[g])
    gm = math.exp(sum(math.log(x[1]) for x in r) / len(r))
    w = max(r, key=lambda x: x[1]); b = min(r, key=lambda x: x[1])
    print('%-15s %3d %-12s %5d %7.3f %7.3f %7.3f  %d (%.1f -> %.1f)' % (g[0], g[1], g[2], len(r), gm, b[1], w[1], w[0], w[2], w[3]))
