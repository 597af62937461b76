#!/usr/bin/env bash
# wrapper.sh: the ./tune script itself. Its set-up runs on stand-in source
# trees (a copy of ./tune beside a stub autoreconf, configure and Makefile
# whose "build" is a src/tune that prints its arguments), so no real build
# runs: through a link to the script, after an interrupted bootstrap, two
# first builds at once, a path Autoconf refuses. Then --gpus values and the
# no-GPU answer.
set -u
. "$(dirname "$0")/tap.sh"
srcdir=${TUNE_SRCDIR:?TUNE_SRCDIR is set by the harness}
unset MAKEFLAGS MFLAGS MAKELEVEL TUNE_BUILD_DIR
cd "$tmp" || exit 1
no_gpu=0
ls /dev/nvidia[0-9]* >/dev/null 2>&1 || no_gpu=1

# The stand-ins. autoreconf writes configure first and Makefile.in last, as
# autoconf and automake do; FAKE_AUTORECONF_DIE stops it in between, as an
# interrupt would. configure, like config.status, fails without
# Makefile.in; it logs each start in configure.log beside it, and waits
# while the file hold is there.
mkdir -p stub/bin
cat >stub/bin/autoreconf <<'EOF'
#!/bin/sh
cp "$STUB/configure" configure && chmod +x configure
[ -z "${FAKE_AUTORECONF_DIE:-}" ] || kill -KILL $$
cp "$STUB/Makefile.in" Makefile.in
EOF
cat >stub/configure <<'EOF'
#!/bin/sh
src=$(cd "$(dirname "$0")" && pwd)
echo "$$" >>"$src/configure.log"
[ -f "$src/Makefile.in" ] || { echo "config.status: error: cannot find input file: 'Makefile.in'" >&2; exit 1; }
while [ -e "$src/hold" ]; do sleep 0.1; done
: >config.log
cp "$src/Makefile.in" Makefile
EOF
printf 'src/tune:\n\tmkdir -p src && printf %s >$@ && chmod +x $@\n' \
  "'#!/bin/sh\\necho \"built tune: \$\$*\"\\n'" >stub/Makefile.in
chmod +x stub/bin/autoreconf
export STUB=$tmp/stub PATH=$tmp/stub/bin:$PATH

# fake_tree DIR: a source tree of ./tune alone, not bootstrapped yet.
fake_tree() {
  mkdir -p "$1" && cp "$srcdir/tune" "$1/tune"
}

# Run through a link: the source tree is the script's own folder, not the
# link's.
fake_tree one
mkdir -p bin elsewhere && ln -s "$tmp/one/tune" bin/tune
(cd elsewhere && timeout 60 ../bin/tune table --hash) >out 2>err
rc=$?
ok $rc "./tune run through a link builds its own tree (rc $rc): $(tail -n1 err)"
grep -q '^built tune: table --hash$' out && [ -x one/build/src/tune ]
ok $? "and runs the tune built there, in one/build"
[ "$(ls -A bin)" = tune ] && [ -z "$(ls -A elsewhere)" ]
ok $? "nothing was written beside the link or in the working folder"

# A bootstrap interrupted between configure and Makefile.in is done again.
fake_tree two
FAKE_AUTORECONF_DIE=1 timeout 60 two/tune table >out 2>err
ok $(( $? == 0 )) "an interrupted bootstrap fails"
timeout 60 two/tune table >out 2>err
rc=$?
ok $rc "the next ./tune bootstraps again and builds (rc $rc): $(tail -n1 err)"
grep -q '^built tune: table$' out
ok $? "and runs the tune built"

# Two first builds at once: the second waits for the first, and configure
# runs once. The first is held in configure until the second has either
# said it waits or started a configure of its own.
fake_tree three
(cd three && autoreconf)
touch three/hold
timeout 120 three/tune table >a.out 2>a.err &
a=$!
for _ in $(seq 600); do [ -s three/configure.log ] && break; sleep 0.1; done
timeout 120 three/tune table >b.out 2>b.err &
b=$!
for _ in $(seq 600); do
  grep -q "waiting for another ./tune" b.err && break
  [ "$(wc -l <three/configure.log)" -ge 2 ] && break
  sleep 0.1
done
rm -f three/hold
wait $a
ra=$?
wait $b
rb=$?
ok $(( ra != 0 || rb != 0 )) "two first builds at once both succeed (rc $ra, $rb): $(tail -n1 b.err)"
ok $(( $(wc -l <three/configure.log) != 1 )) "configure ran once ($(wc -l <three/configure.log) times)"
grep -q "waiting for another ./tune building in" b.err
ok $? "the second said it waits: $(head -n1 b.err)"
grep -q '^built tune: table$' b.out
ok $? "and then ran the tune built"

# Not root, with packages missing: the exact commands, and nothing else.
mkdir -p user/bin
printf '#!/bin/sh\necho 1000\n' >user/bin/id
printf '#!/bin/sh\nexit 1\n' >user/bin/dpkg-query
chmod +x user/bin/id user/bin/dpkg-query
fake_tree four
PATH=$tmp/user/bin:$PATH timeout 60 four/tune table >out 2>err
ok $(( $? != 1 )) "not root, packages missing: ./tune exits 1"
grep -q "^tune: install them with: sudo apt-get update && sudo apt-get install -y autoconf automake .*help2man$" err
ok $? "it prints the apt-get lines the root path runs: $(tail -n1 err)"
[ "$(ls -A four)" = tune ]
ok $? "and does nothing else"

# --gpus is checked before the GPU: the no-GPU hint repeats it, so a bad one
# gets the built tune's own message, and nothing is built.
for v in eight 0 1025 -1 ''; do
  TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" --gpus "$v" --db x.db >out 2>err
  rc=$?
  ok $(( rc != 2 )) "./tune --gpus '$v' exits 2 (got $rc)"
  "$tune" --backend sim --gpus "$v" >/dev/null 2>want
  want=$(sed -n "s/^tune run: \(--gpus: .*\) (see .*/\1/p" want)
  grep -qF -- "${want:-?}" err && ! grep -q "no CUDA device" err
  ok $? "./tune --gpus '$v' says what the built tune says ($want): $(head -n1 err)"
done
[ ! -e nobuild ] && [ ! -e x.db ]
ok $? "nothing built or written for them"
TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" --gpus=08 >out 2>err
[ $no_gpu -eq 0 ] || grep -q -- "--backend sim --gpus 8)" err
ok $? "--gpus=08 is 8, as the built tune reads it: $(tail -n1 err)"

# "--resume 3" gets the built tune's hint (--resume=3) from the script too;
# a number after another option's value gets none.
TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" --gpus 2 --resume 3 >out 2>err
rc=$?
[ $rc -eq 2 ] && grep -q -- "unexpected argument '3' (a run to resume is given as --resume=3)" err && [ ! -e nobuild ]
ok $? "./tune --resume 3: exit 2 with the --resume=3 hint, nothing built (rc $rc): $(head -n1 err)"
TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" --resume --db x.db 3 >out 2>err
rc=$?
[ $rc -eq 2 ] && grep -q -- "unexpected argument '3'" err && ! grep -q -- "--resume=3" err
ok $? "./tune --resume --db x.db 3: exit 2, no hint (rc $rc): $(head -n1 err)"

# "--" ends the options, as for the built tune: nothing after it is taken.
TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" --gpus 8 -- x >out 2>err
rc=$?
[ $rc -eq 2 ] && grep -q -- "unexpected argument 'x'" err && [ ! -e nobuild ]
ok $? "./tune --gpus 8 -- x: exit 2, unexpected argument 'x', nothing built (rc $rc): $(head -n1 err)"
TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" --gpus 8 -- >out 2>err
rc=$?
! grep -q "unknown option" err && [ ! -e nobuild ] && { [ $no_gpu -eq 0 ] || grep -q "no CUDA device" err; }
ok $? "./tune --gpus 8 --: taken as --gpus 8 (rc $rc): $(head -n1 err)"

# A sim run without --gpus is refused as the built tune refuses it, before
# a build.
for cmd in "--backend sim" "run --backend=sim --worlds 2"; do
  # shellcheck disable=SC2086
  TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" $cmd >out 2>err
  rc=$?
  [ $rc -eq 2 ] && grep -q -- "--gpus is required with --backend sim" err && [ ! -e nobuild ]
  ok $? "./tune $cmd: exit 2, '--gpus is required', nothing built (rc $rc): $(head -n1 err)"
done
"$tune" --backend sim >/dev/null 2>err
grep -q -- "--gpus is required with --backend sim" err
ok $? "as the built tune says: $(head -n1 err)"

# A tree or build folder whose path Autoconf refuses ("unsafe srcdir
# value") is refused first, naming it, before packages or a build.
fake_tree "sp ace"
timeout 20 "sp ace/tune" table >out 2>err
rc=$?
[ $rc -eq 2 ] && grep -q "^tune: error: Autotools cannot build in '$tmp/sp ace': its path holds a space" err &&
  grep -q "move the checkout" err && [ "$(ls -A "sp ace")" = tune ]
ok $? "a checkout at a path with a space: exit 2, named, nothing made (rc $rc): $(head -n1 err)"
TUNE_BUILD_DIR='$tmp/b$x' timeout 20 one/tune table >out 2>err
rc=$?
[ $rc -eq 2 ] && grep -q "Autotools cannot build in '\$tmp/b\$x'" err && grep -q "set TUNE_BUILD_DIR" err && [ ! -e "\$tmp" ]
ok $? "TUNE_BUILD_DIR with a \$: exit 2, named, nothing made (rc $rc): $(head -n1 err)"

# Run by sh, the script is read by bash.
TUNE_BUILD_DIR=$tmp/nobuild timeout 20 sh "$srcdir/tune" --gpus eight >out 2>err
rc=$?
[ $rc -eq 2 ] && grep -q -- "^tune: --gpus: 'eight' is not a number" err
ok $? "sh ./tune --gpus eight gets the script's own answer (rc $rc): $(head -n1 err)"

# Without a GPU and with a tune built, the built tune answers: it checks
# every value first, then looks for the GPU, so a typo is not hidden
# behind the missing GPU.
if [ $no_gpu -eq 1 ]; then
  timeout 60 one/tune --gpus 8 --min-bytes 1X >out 2>err
  grep -q '^built tune: --gpus 8 --min-bytes 1X$' out
  ok $? "./tune --gpus 8 --min-bytes 1X without a GPU goes to the built tune: $(head -n1 err)"
fi

tap_end
