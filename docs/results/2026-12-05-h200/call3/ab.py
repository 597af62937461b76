#!/usr/bin/env python3
"""ab.py: the push rows of the four rounds (old new new old) per world and dtype; prints the mean
of each version's two rounds and new/old. Run in this folder."""
import glob, collections
def push(f):
    r = {}
    for l in open(f):
        w = l.split()
        if len(w) > 9 and w[7] == 'push': r[(w[0], int(w[1]))] = float(w[8])
    return r
for w in (2, 8):
    for d in ('bf16', 'fp32'):
        t = {k: push(f'w{w}-{d}-round{n}-{k2}.txt') for n, k2 in ((1, 'old'), (2, 'new'), (3, 'new'), (4, 'old')) for k in [n]}
        for key in sorted(t[1]):
            o = (t[1][key] + t[4][key]) / 2; n = (t[2][key] + t[3][key]) / 2
            print(f'world {w} {d:4} {key[0]:14} {key[1]:7}  old {o:6.2f}  new {n:6.2f}  new/old {n / o:.3f}')
