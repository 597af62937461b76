import re,sys
md=open(sys.argv[1]).read()
secs=re.split(r'\n### ',md)
rows=[]
for s in secs[1:]:
    title=s.split('\n')[0].strip()
    if not re.match(r'(all_gather|all_reduce|reduce_scatter) \w+ (eager|graph) \w+$',title): continue
    worst=(0,None); small=(0,None); over=[]
    data={}
    for l in s.split('\n'):
        if l.startswith('| 2 |'):
            f=[x.strip() for x in l.strip('|').split('|')]
            size=f[1]; after=float(f[3]); n=float(f[4]) if f[4] not in ('','-') else None; sy=float(f[5]) if f[5] not in ('','-') else None
            best=min(x for x in (n,sy) if x)
            r=after/best; data[size]=(after,n,sy,r)
            if r>worst[0]: worst=(r,size)
            sz=size
            mult={'K':1,'M':1024,'G':1024*1024}[sz[-1]]*int(sz[:-1])
            if mult<=64 and r>small[0]: small=(r,size)
            if r>1.0: over.append(f"{size} {r:.2f}")
    rows.append((title,worst,small,over,data))
    print(f"| {title} | {worst[0]:.2f} | {' '.join(over) or '-'} | {small[0]:.2f} ({small[1]}) |")
