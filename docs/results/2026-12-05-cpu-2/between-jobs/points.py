#!/usr/bin/env python3
"""points.py A.h B.h A.db [B.db ...]: every point of compare-headers' grid (1K..256M, 8 per
octave) where the two headers choose different paths, with each database's sweep median of
the two paths there (interpolated log-log between measured sizes, as compare-headers does),
and the ratio path-B / path-A in each database: > 1 means A's choice is the faster there."""
import math, os, re, sqlite3, subprocess, sys

TUNE = os.environ.get("TUNE", "build/src/tune")
ALIGN = {'DC_ALIGN_16': 'align16', 'DC_ALIGN_ANY': 'unaligned', 'DC_ALIGN_REG': 'reg16'}

def rows(h):
    out = subprocess.run([TUNE, 'table', '--file', h], capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r'\s*\{(\d+), (\d+), (\w+), DC_OP_(\w+), DC_DTYPE_(\w+), (\w+), DC_MODE_(\w+), (\d+), \d+, \{(.*)\}\},?$', line)
        if not m or m.group(1) == '0':
            continue
        segs = [(int(t) if t != 'DC_BYTES_MAX' else 1 << 62, p.lower())
                for t, p in re.findall(r'\{(\w+), DC_PATH_(\w+)\}', m.group(9))]
        key = (m.group(4).lower(), m.group(5).lower(), int(m.group(2)), ALIGN[m.group(6)], m.group(7).lower(), int(m.group(8)))
        res[key] = segs

    return res

def path_at(segs, b):
    for t, p in segs:
        if b <= t:
            return p
    return segs[-1][1]

def measured(db, key, path, b):
    op, dt, w, al, mode, skew = key
    q = db.execute("SELECT c.bytes, avg(c.median_ns) FROM configs c JOIN runs r ON r.id = c.run_id"
                   " WHERE r.kind = 'sweep' AND c.op = ? AND c.path = ? AND c.dtype = ? AND c.world = ?"
                   " AND c.align = ? AND c.mode = ? AND c.skew_ns = ? AND c.wrong_elems = 0"
                   " GROUP BY c.bytes ORDER BY c.bytes", (op, path, dt, w, al, mode, skew)).fetchall()
    lo = hi = None
    for x, t in q:
        if x <= b: lo = (x, t)
        if x >= b and hi is None: hi = (x, t)
    if lo is None or hi is None: return None
    if lo[0] == hi[0]: return lo[1]
    f = math.log(b / lo[0]) / math.log(hi[0] / lo[0])
    return math.exp(math.log(lo[1]) + f * (math.log(hi[1]) - math.log(lo[1])))

def main():
    ra, rb = rows(sys.argv[1]), rows(sys.argv[2])
    dbs = [sqlite3.connect('file:%s?mode=ro' % d, uri=True) for d in sys.argv[3:]]
    print('op dtype world align mode bytes pathA pathB ' + ' '.join('ratio_db%d' % i for i in range(len(dbs))))
    for key in sorted(ra):
        if key not in rb: continue
        k = 0
        while True:
            x = 1024 * 2 ** (k / 8)
            if x > (256 << 20) * (1 + 1e-12): break
            b = int(round(x)); k += 1
            pa, pb = path_at(ra[key], b), path_at(rb[key], b)
            if pa == pb: continue
            rs = []
            for db in dbs:
                ta, tb = measured(db, key, pa, b), measured(db, key, pb, b)
                rs.append('%.3f' % (tb / ta) if ta and tb else 'na')
            print(*key[:5], b, pa, pb, *rs)

main()
