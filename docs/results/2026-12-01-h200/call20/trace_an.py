import gzip, re, sys, collections, statistics as st
pat = re.compile(r'run trial (\d+) config (\d+) (\S+) (\S+) rank (\d+) set \d+: (\d+) ns')
def groups(fn):
    seq = {0: [], 1: []}
    for line in gzip.open(fn, 'rt'):
        m = pat.search(line)
        if m:
            t, i, impl, path, r, ns = m.groups()
            seq[int(r)].append((int(t), int(i), impl, path, int(ns)))
    # split rank 0's sequence into calls (trial goes back)
    out = []
    for r in (0, 1):
        gs, cur, last = [], [], -1
        for x in seq[r]:
            if x[0] < last or (x[0] == 0 and last == 0 and any(y[1] == x[1] for y in cur if y[0] == 0)):
                gs.append(cur); cur = []
            cur.append(x); last = x[0]
        gs.append(cur)
        out.append(gs)
    return out
def analyze(fn):
    g0, g1 = groups(fn)
    assert len(g0) == len(g1), (len(g0), len(g1))
    ratios = collections.defaultdict(list)   # (shared?) -> auto/best
    pred = collections.defaultdict(list)     # predecessor class -> time/median of config
    for a, b in zip(g0, g1):
        slow = {}
        names = {}
        order = []
        for x, y in zip(a, b):
            assert x[:2] == y[:2]
            slow[(x[0], x[1])] = max(x[4], y[4]); names[x[1]] = (x[2], x[3]); order.append((x[0], x[1]))
        cfgs = sorted(names)
        med = {c: st.median([slow[k] for k in slow if k[1] == c]) for c in cfgs}
        has_prev = any(n[0].endswith('_prev') for n in names.values())
        # auto (detcoll auto = config 0) against the forced config of the same impl with the same path
        for c in cfgs:
            for d in cfgs:
                if names[c][1] == 'auto' and not names[c][0].endswith('_prev') and names[d][0] == names[c][0] and names[d][1] != 'auto':
                    ratios[has_prev].append(med[c] / med[d])
        prevk = None
        for k in order:
            c = k[1]
            if prevk is not None and names[c][0].startswith('detcoll'):
                p = names[prevk[1]]
                cls = ('same-cfg' if prevk[1] == c else 'nccl' if p[0].startswith('nccl') else
                       'dc-prev' if p[0].endswith('_prev') else 'dc-other')
                pred[(names[c][1] == 'auto', names[c][0].endswith('_prev'), has_prev, cls)].append(slow[k] / med[c])
            prevk = k
    for hp in (False, True):
        v = ratios[hp]
        if v: print(f'  prev in trials={hp}: n={len(v)} median auto/forced={st.median(v):.4f} mean={st.mean(v):.4f} >1.03: {sum(x>1.03 for x in v)}')
    for k in sorted(pred):
        v = pred[k]
        print(f'  auto={k[0]} isprev={k[1]} prevtrials={k[2]} after={k[3]:9s} n={len(v):5d} median t/med={st.median(v):.4f} mean={st.mean(v):.4f}')
for fn in sys.argv[1:]:
    print(fn); analyze(fn)

def switch_effect(fn):
    g0, g1 = groups(fn)
    res = collections.defaultdict(list)
    state = {}  # comm (plain/reg) -> 'prev' or 'new'
    for a, b in zip(g0, g1):
        slow = {}; names = {}; order = []
        for x, y in zip(a, b):
            slow[(x[0], x[1])] = max(x[4], y[4]); names[x[1]] = (x[2], x[3]); order.append((x[0], x[1]))
        med = {c: st.median([slow[k] for k in slow if k[1] == c]) for c in names}
        if not any(n[0].endswith('_prev') for n in names.values()): continue
        for k in order:
            impl, path = names[k[1]]
            if not impl.startswith('detcoll') or path != 'auto': continue
            comm = 'reg' if '_reg' in impl else 'plain'
            tab = 'prev' if impl.endswith('_prev') else 'new'
            sw = state.get(comm) != tab
            state[comm] = tab
            res[(tab, sw)].append(slow[k] / med[k[1]])
    for k in sorted(res):
        v = res[k]; print(f'  table={k[0]} switched={k[1]} n={len(v)} median={st.median(v):.4f} mean={st.mean(v):.4f}')
if __name__ == '__main__':
    for fn in sys.argv[1:]:
        print('switch', fn); switch_effect(fn)
