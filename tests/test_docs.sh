#!/bin/sh
# The docs must match the code:
# - the key table in configs/README.md must be what `seertrain --help-config --markdown` prints;
# - README.md's "Benchmarks" section must name every script of benchmarks/ (an index that silently
#   falls behind the scripts is how a reader misses the one that answers their question);
# - the contents lists of the long markdown files list their sections;
# - every shipped predictor (predictors/*.seer) has a card, a README row, and predicts.
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

# - every shipped predictor has its card in predictors/README.md and its row in README.md's
#   "Shipped predictors" table, loads, and predicts a finite positive value of every metric for a
#   network (a file added without its card, or one libseer refuses, fails here)
seerpredict=$(dirname "$seertrain")/seerpredict
table=$(sed -n '/^### Shipped predictors$/,/^## /p' "$top/README.md")
n=0
for f in "$top"/predictors/*.seer; do
    name=$(basename "$f")
    n=$((n + 1))
    grep -q "^## $name " "$top/predictors/README.md" ||
        { echo "test_docs: predictors/README.md has no card (a '## $name (...)' section) for $name"; exit 1; }
    case "$table" in
        *"| \`$name\` |"*|*"| \`$name\` (experimental) |"*) ;;
        *) echo "test_docs: README.md's Shipped predictors table has no row for $name"; exit 1 ;;
    esac
    "$seerpredict" "$f" "$top/tests/data/onnx/resnet18.onnx" --batch 1 --json | python3 -c '
import json, math, sys
r = json.load(sys.stdin)["results"][0]["metrics"]
bad = [k for k, v in r.items() if not (math.isfinite(v["value"]) and v["value"] > 0)]
if not r or bad:
    sys.exit("test_docs: %s predicts %s for resnet18" % (sys.argv[1], bad or "no metric"))
' "$name" || exit 1
done
echo "test_docs: the $n shipped predictors each have a card and a README row, and predict resnet18"
