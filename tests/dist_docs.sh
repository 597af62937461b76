#!/usr/bin/env bash
# dist_docs.sh: every document the shipped ones point a reader to (a
# docs/NAME.md, or a markdown link to a .md file) is in the source tree.
# In a git checkout that holds trivially; `make distcheck` runs this test in
# the tarball's tree, where a document left out of EXTRA_DIST is missing.
# docs/results stays in git only (Makefile.am), so its paths are not asked.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
cd "$src" || exit 1

docs=$(ls README.md */README.md docs/*.md 2>/dev/null)
ok $(( $(echo "$docs" | grep -c .) < 2 )) "the documents are found ($(echo $docs))"
missing=
for d in $docs; do
  dir=$(dirname "$d")
  {
    # Named from the root: docs/fleet.md, kernels/README.md.
    grep -oE '(^|[^A-Za-z0-9_./-])(docs|kernels|src|db|tuner|plots|tests)/[A-Za-z0-9_.-]+\.md' "$d" |
      sed -E 's/^[^a-z]//'
    # Markdown links, relative to the document's folder.
    grep -oE '\]\([^):#]+\.md' "$d" | sed -e 's/^](//' -e "s|^|$dir/|"
  } | while read -r p; do
    case $p in docs/results/* | ./docs/results/*) continue ;; esac
    [ -e "$p" ] || echo "$d:$p"
  done
done >"$tmp/missing"
missing=$(xargs <"$tmp/missing")
ok $(( ${#missing} != 0 )) "every document they name is here${missing:+ (missing: $missing)}"
tap_end
