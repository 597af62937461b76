import sys,statistics,math
def load(f):
    d={}
    for l in open(f):
        if l.startswith('#') or not l.strip(): continue
        w=l.split()
        if len(w)<10 or not w[1].isdigit(): continue
        d[(w[6],w[7],int(w[1]))]=float(w[8])
    return d
vers=['old','copy','new']
for op in ['all_gather','all_reduce','reduce_scatter']:
    D={v:[load(f'bench-{op}-{v}-{r}.txt') for r in (1,2)] for v in vers}
    keys=sorted(D['old'][0])
    for mode in ['graph','eager']:
        paths=sorted(set(k[1] for k in keys if k[0]==mode))
        for p in paths:
            ks=[k for k in keys if k[0]==mode and k[1]==p]
            m={v:[min(x[k] for x in D[v]) for k in ks] for v in vers}
            rc=[c/o for c,o in zip(m['copy'],m['old'])]; rn=[n/o for n,o in zip(m['new'],m['old'])]; rnc=[n/c for n,c in zip(m['new'],m['copy'])]
            pw=[i for i,k in enumerate(ks) if k[2]&(k[2]-1)==0]
            print(f'{op:14s} {mode:5s} {p:12s} copy/old gm {statistics.geometric_mean(rc):.3f} [{min(rc):.3f},{max(rc):.3f}] pow2 max {max(rc[i] for i in pw):.3f} | new/old gm {statistics.geometric_mean(rn):.3f} [{min(rn):.3f},{max(rn):.3f}] pow2 max {max(rn[i] for i in pw):.3f} | new/copy gm {statistics.geometric_mean(rnc):.3f} [{min(rnc):.3f},{max(rnc):.3f}]')
