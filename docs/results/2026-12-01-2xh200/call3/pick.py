# pick.py REPORT.md SIZE...: after, NCCL and NCCL symm (us) of every world-2 table of the report at the given sizes
import re, sys
md = open(sys.argv[1]).read(); sizes = sys.argv[2:]
for s in re.split(r'\n### ', md)[1:]:
    title = s.split('\n')[0].strip()
    if not re.match(r'(all_gather|all_reduce|reduce_scatter) \w+ (eager|graph) \w+$', title): continue
    for l in s.split('\n'):
        if l.startswith('| 2 |'):
            f = [x.strip() for x in l.strip('|').split('|')]
            if f[1] in sizes:
                best = min(float(x) for x in (f[4], f[5]) if x not in ('', '-'))
                print(f"{title:34s} {f[1]:>5s} after {f[3]:>8s} nccl {f[4]:>8s} symm {f[5]:>8s} ratio {float(f[3])/best:.3f}")
