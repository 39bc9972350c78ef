#!/usr/bin/env python3
"""md_contents.py FILE.md [--check]: the contents list of a long markdown file, one link per
`## ` section, written between the lines `<!-- contents:begin -->` and `<!-- contents:end -->`
(which FILE.md must hold). --check rewrites nothing and exits 1, naming the file, when the list
is not the one the headings give (tests/test_docs.sh runs it on benchmarks/RESULTS.md).

Links use GitHub's anchors: the heading lowercased, every character but letters, digits, spaces,
hyphens and underscores dropped, spaces made hyphens, a repeated anchor suffixed -1, -2, ...
"""
import argparse
import re
import sys

BEGIN, END = "<!-- contents:begin -->", "<!-- contents:end -->"


def slug(title, seen):
    s = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
    n = seen.get(s, 0)
    seen[s] = n + 1
    return s if n == 0 else "%s-%d" % (s, n)


def contents(lines):
    seen, out, fence = {}, [], False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("#"):
            continue
        m = re.match(r"(#+) (.*)", line)
        if not m:
            continue
        a = slug(m.group(2), seen)
        if len(m.group(1)) == 2:
            out.append("- [%s](#%s)" % (m.group(2).strip(), a))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--check", action="store_true", help="exit 1 if the list is out of date; write nothing")
    a = ap.parse_args()
    try:
        text = open(a.file, encoding="utf-8").read()
    except OSError as e:
        sys.exit("md_contents.py: %s: %s" % (a.file, e.strerror))
    lines = text.split("\n")
    if lines.count(BEGIN) != 1 or lines.count(END) != 1 or lines.index(BEGIN) > lines.index(END):
        sys.exit("md_contents.py: %s: needs one line '%s' and, after it, one line '%s'" % (a.file, BEGIN, END))
    i, j = lines.index(BEGIN), lines.index(END)
    want = contents(lines[:i] + lines[j + 1:])
    if lines[i + 1:j] == want:
        return
    if a.check:
        sys.exit("md_contents.py: %s: the contents list does not match the headings; run "
                 "python3 scripts/md_contents.py %s" % (a.file, a.file))
    tmp = a.file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines[:i + 1] + want + lines[j:]))
    import os
    os.replace(tmp, a.file)
    print("md_contents.py: %s: %d sections listed" % (a.file, len(want)))


if __name__ == "__main__":
    main()
