import sys,re,collections
cur=None; best=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m=re.match(r'##### (\w+) round (\d)',l)
    if m: cur=m.group(1); continue
    f=l.split()
    if len(f)==10 and f[0] in('all_reduce','all_gather','reduce_scatter'):
        k=(f[0],int(f[2]),f[4],int(f[5])); v=float(f[6])
        best[k][cur]=min(best[k].get(cur,1e18),v)
rows=[]
bp=collections.defaultdict(dict)
for k,d in sorted(best.items()):
    if 'old' in d and 'cur' in d:
        r=d['cur']/d['old']; rows.append((k,d['old'],d['cur'],r))
        kk=(k[0],k[1],k[3])
        for v in ('old','cur'):
            if v not in bp[kk] or d[v]<bp[kk][v][0]: bp[kk][v]=(d[v],k[2])
print("path by path, cur/old > 1.05:")
for k,o,c,r in rows:
    if r>1.05: print("  %-15s w%d %-13s %10d  %8.2f -> %8.2f  %.3f"%(k[0],k[1],k[2],k[3],o,c,r))
print("rows", len(rows), "within 1.05:", sum(1 for x in rows if x[3]<=1.05))
print("best path per size:")
for kk,d in sorted(bp.items()):
    print("  %-15s w%d %10d  old %8.2f (%s)  cur %8.2f (%s)  %.3f"%(kk[0],kk[1],kk[2],d['old'][0],d['old'][1],d['cur'][0],d['cur'][1],d['cur'][0]/d['old'][0]))
