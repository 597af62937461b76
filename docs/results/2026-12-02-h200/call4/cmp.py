import sys,collections,statistics
def load(f):
    d={}
    for l in open(f):
        if l.startswith('#') or not l.strip(): continue
        w=l.split()
        if len(w)<10 or not w[1].isdigit(): continue
        op,size,mode,path,t=w[0],int(w[1]),w[6],w[7],float(w[8])
        d[(mode,path,size)]=t
    return d
for op in ['ag','ar']:
    o=[load(f'bench-{op}-old-{r}.txt') for r in (1,2)]
    n=[load(f'bench-{op}-new-{r}.txt') for r in (1,2)]
    for mode in ['graph','eager']:
        print(f'== {op} {mode}: size MiB | pipeline old(min of 2) new | new/old | direct | auto(new)')
        rat=[]
        for k in sorted(o[0]):
            if k[0]!=mode or k[1]!='pipeline': continue
            s=k[2]
            po=min(x[k] for x in o); pn=min(x[k] for x in n)
            dk=(mode,'direct',s); d=min(x[dk] for x in n+o)
            ak=[kk for kk in n[0] if kk[0]==mode and kk[2]==s and kk[1].startswith('auto')][0]
            rat.append(pn/po)
            print(f'{s/2**20:7.2f} {po:8.2f} {pn:8.2f} {pn/po:6.3f} {d:8.2f} {min(x[ak] for x in n):8.2f} {ak[1]}')
        print('geomean new/old', statistics.geometric_mean(rat), 'max', max(rat), 'min', min(rat))
