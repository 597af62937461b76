import sys
exec(open('cmp2.py').read().split('vers=')[0])
for op in sys.argv[1:]:
  D={v:[load(f'bench-{op}-{v}-{r}.txt') for r in (1,2)] for v in ['old','copy','new']}
  for mode in ['graph']:
    for k in sorted(D['old'][0]):
        if k[0]!=mode or k[1]!='pipeline': continue
        o,c,n=[[x[k] for x in D[v]] for v in ['old','copy','new']]
        print(f'{k[2]/2**20:7.2f}  old {o[0]:7.2f} {o[1]:7.2f}  copy {c[0]:7.2f} {c[1]:7.2f}  new {n[0]:7.2f} {n[1]:7.2f}  new/copy {min(n)/min(c):.3f}')
