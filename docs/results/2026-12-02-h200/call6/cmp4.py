import sys,statistics
def load(f):
    d={}
    for l in open(f):
        if l.startswith('#') or not l.strip(): continue
        w=l.split()
        if len(w)<10 or not w[1].isdigit(): continue
        d[(w[6],w[7],int(w[1]))]=float(w[8])
    return d
detail = len(sys.argv) > 1
for op in ['all_gather','all_reduce','reduce_scatter']:
    D={v:[load(f'bench-{op}-{v}-{r}.txt') for r in (1,2)] for v in ['old','new']}
    keys=sorted(D['old'][0])
    for p in sorted(set(k[1] for k in keys)):
        ks=[k for k in keys if k[1]==p]
        o=[min(x[k] for x in D['old']) for k in ks]; n=[min(x[k] for x in D['new']) for k in ks]
        r=[b/a for a,b in zip(o,n)]
        pw=[i for i,k in enumerate(ks) if k[2]&(k[2]-1)==0]
        worst=max(range(len(r)),key=lambda i:r[i]); best=min(range(len(r)),key=lambda i:r[i])
        print(f'{op:14s} graph {p:12s} new/old gm {statistics.geometric_mean(r):.3f} min {r[best]:.3f} ({ks[best][2]/2**20:.2f} MiB) max {r[worst]:.3f} ({ks[worst][2]/2**20:.2f} MiB); powers of two: max {max(r[i] for i in pw):.3f}; sizes over 1.05: {sum(x>1.05 for x in r)} of {len(r)}')
        if detail and p in sys.argv[1:]:
            for k,a,b in zip(ks,o,n): print(f'   {k[2]/2**20:8.2f} {a:9.2f} {b:9.2f} {b/a:6.3f}')
