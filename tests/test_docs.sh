#!/bin/sh
# The key table in configs/README.md must be what `seertrain --help-config --markdown` prints.
set -eu
seertrain=$1 readme=$2
sed -n '/<!-- keys:begin -->/,/<!-- keys:end -->/p' "$readme" | sed '1d;$d' > /tmp/seer_docs_$$.md
if ! "$seertrain" --help-config --markdown | diff -u /tmp/seer_docs_$$.md -; then
    echo "configs/README.md is out of date: regenerate the key table with seertrain --help-config --markdown"
    rm -f /tmp/seer_docs_$$.md
    exit 1
fi
rm -f /tmp/seer_docs_$$.md
echo "test_docs: configs/README.md matches the config table"
