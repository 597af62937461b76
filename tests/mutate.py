#!/usr/bin/env python3
"""mutate.py: how much of one source file the unit tests would notice going wrong.

Flips one operator on one line at a time (< and <=, > and >=, == and !=,
&& and ||, "+ 1" and "- 1"; the first that applies on the line), rebuilds
the named test programs in a configured build folder, runs them (60 s each
at most: a hang counts as caught) and prints, per line, "killed" or
"SURVIVED" with the line. The file is put back as it was at the end, and
on an interrupt. A survivor is a place to look: equivalent mutants (a loop
bound one past the end that changes no result, a tie in a comparator) are
common; the others show behaviour no test pins down.

Usage, from a clone whose build folder is configured (for speed:
../configure --disable-shared --without-cuda), never one being worked in:
    python3 tests/mutate.py tuner/stability.c test_stability,test_crossover [FIRST_LINE]
Run it with nice; it rebuilds after each mutant.
"""
import os
import re
import subprocess
import sys

OPS = [(r" < ", " <= "), (r" <= ", " < "), (r" > ", " >= "), (r" >= ", " > "), (r" == ", " != "),
       (r" != ", " == "), (r" && ", " || "), (r" \|\| ", " && "), (r" \+ 1", " + 2"), (r" - 1", " - 2")]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.join(root, "build")
    path = os.path.join(root, sys.argv[1])
    tests = sys.argv[2].split(",")
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    orig = open(path).read()
    lines = orig.split("\n")

    def build_ok():
        r = subprocess.run(["make", "-C", build, "-s"] + ["tests/" + t for t in tests], capture_output=True)
        return r.returncode == 0

    def tests_pass():
        for t in tests:
            try:
                r = subprocess.run([os.path.join(build, "tests", t)], capture_output=True, cwd=build, timeout=60)
            except subprocess.TimeoutExpired:
                return False
            if r.returncode != 0:
                return False
        return True

    survivors = run = 0
    try:
        for i, line in enumerate(lines):
            s = line.strip()
            if i + 1 < first or s.startswith(("/*", "*", "//", "#")):
                continue
            for pat, rep in OPS:
                m = re.search(pat, line)
                if not m:
                    continue
                mutated = lines[:]
                mutated[i] = line[:m.start()] + rep + line[m.end():]
                open(path, "w").write("\n".join(mutated))
                if not build_ok():
                    continue  # does not compile: try the next operator
                run += 1
                alive = tests_pass()
                survivors += alive
                print("SURVIVED" if alive else "killed", i + 1, pat.strip(), "|", s[:100], flush=True)
                break
    finally:
        open(path, "w").write(orig)
        build_ok()
    print(f"{run} mutants, {survivors} survived")


if __name__ == "__main__":
    main()
