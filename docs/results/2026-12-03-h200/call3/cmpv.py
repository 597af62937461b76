import glob, re, collections, math, sys
base = sys.argv[1]; libs = sys.argv[2:]
t = collections.defaultdict(dict)
for f in glob.glob('bench-*.txt'):
    m = re.match(r'bench-(\w+)-o(\d+)-(\w+)-(\d)\.txt', f)
    op, off, lib = m.group(1), int(m.group(2)), m.group(3)
    for l in open(f):
        if l.startswith('#') or not l.strip(): continue
        w = l.split()
        if len(w) < 15 or w[5] != 'detcoll': continue
        key = (op, off, w[7].split('=')[0], int(w[1]))
        t[key][lib] = min(float(w[8]), t[key].get(lib, 1e18))
        if w[14] != '0': print('WRONG', f, l)
groups = collections.defaultdict(lambda: collections.defaultdict(list))
for k, d in t.items():
    for lib in libs:
        if base in d and lib in d: groups[k[:3]][lib].append((k[3], d[lib] / d[base]))
print('%-15s %3s %-12s' % ('op', 'off', 'path') + ''.join('   %-26s' % (l + '/' + base + ' gm best worst@size') for l in libs))
for g in sorted(groups):
    line = '%-15s %3d %-12s' % g
    for lib in libs:
        r = groups[g][lib]
        if not r: line += '   %-26s' % '-'; continue
        gm = math.exp(sum(math.log(x[1]) for x in r) / len(r))
        w = max(r, key=lambda x: x[1]); b = min(r, key=lambda x: x[1])
        line += '   %.3f %.3f %.3f@%-9d' % (gm, b[1], w[1], w[0])
    print(line)
