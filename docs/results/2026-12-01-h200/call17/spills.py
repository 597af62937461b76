# spills.py: ptxas spill figures of every kernel at HEAD (/work/main) against bb43e1f, whose kernels/ must first be
# unpacked: mkdir -p /tmp/oldk /tmp/ts && git archive bb43e1f kernels | tar x -C /tmp/oldk. Needs a configured build in
# /work/main/.device-build for config.h. Prints (stack frame, spill stores, spill loads) bytes, new and old.
import subprocess,sys,re,glob,os
def spills(root, inc):
    res={}
    for f in sorted(glob.glob(root+'/kernels/dc_*.cu')):
        p=subprocess.run(['/usr/local/cuda/bin/nvcc','-std=c++17','-O3','-fmad=false','-arch=sm_90','-cubin','-Xptxas','-v']+inc+[f,'-o','/tmp/ts/x.cubin'],capture_output=True,text=True)
        fn=None
        for line in p.stderr.splitlines():
            m=re.search(r"Function properties for (\S+)",line)
            if m: fn=m.group(1); continue
            m=re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",line)
            if m and fn: res[fn]=tuple(map(int,m.groups())); fn=None
    return res
new=spills('/work/main',['-I/work/main/kernels','-I/work/main/src','-I/work/main/.device-build','-I/work/main/.device-build/kernels'])
old=spills('/tmp/oldk',['-I/tmp/oldk/kernels','-I/work/main/.device-build','-I/work/main/.device-build/kernels'])
import subprocess
def dem(n):
    return subprocess.run(['c++filt',n],capture_output=True,text=True).stdout.strip()
rows=[]
for fn,v in new.items():
    o=old.get(fn)
    if v[1]>0 or (o and o[1]>0):
        rows.append((v[1], dem(fn), v, o))
for r in sorted(rows,reverse=True): print("%-70s new %-14s old %s"%(r[1][:70], r[2], r[3]))
