#!/bin/sh
# The docs must match the code:
# - the key table in configs/README.md must be what `seertrain --help-config --markdown` prints;
# - README.md's "Benchmarks" section must name every script of benchmarks/ (an index that silently
#   falls behind the scripts is how a reader misses the one that answers their question).
set -eu
seertrain=$1 readme=$2
top=$(cd "$(dirname "$readme")/.." && pwd)
sed -n '/<!-- keys:begin -->/,/<!-- keys:end -->/p' "$readme" | sed '1d;$d' > /tmp/seer_docs_$$.md
if ! "$seertrain" --help-config --markdown | diff -u /tmp/seer_docs_$$.md -; then
    echo "configs/README.md is out of date: regenerate the key table with seertrain --help-config --markdown"
    rm -f /tmp/seer_docs_$$.md
    exit 1
fi
rm -f /tmp/seer_docs_$$.md
echo "test_docs: configs/README.md matches the config table"

section=$(sed -n '/^## Benchmarks$/,/^## /p' "$top/README.md")
[ -n "$section" ] || { echo "test_docs: $top/README.md has no '## Benchmarks' section"; exit 1; }
missing=""
n=0
for f in "$top"/benchmarks/*.py "$top"/benchmarks/*.sh; do
    name=$(basename "$f")
    n=$((n + 1))
    case "$section" in
        *"\`$name\`"*) ;;
        *) missing="$missing $name" ;;
    esac
done
if [ -n "$missing" ]; then
    echo "test_docs: README.md, section Benchmarks, does not name:$missing (add a line for each)"
    exit 1
fi
echo "test_docs: README.md's Benchmarks section names all $n scripts of benchmarks/"

# - the contents lists of the long markdown files must list their sections as they are
for f in benchmarks/RESULTS.md datasets/space_cpu/README.md predictors/README.md; do
    python3 "$top/scripts/md_contents.py" "$top/$f" --check
done
echo "test_docs: the contents lists of benchmarks/RESULTS.md, datasets/space_cpu/README.md and predictors/README.md match their sections"
