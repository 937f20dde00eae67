#!/usr/bin/env python3
"""path.py: the rooms an op's path passes through (scripts/path.sh).

Reads the trace of scripts/path_tracer.c (PATH_TRACE) and the library it came
from, names each function and its file (addr2line), cuts the trace into the
program's calls into the library (a function entered at depth 0), and prints,
for each call asked for, its rooms: each call from a function of one file into
one of another is a room entered, each return to a function of another file a
return, each call within a file a stay.

    path.py TRACE LIB NAME:N [NAME:N ...]

NAME:N picks the Nth call (from 1) whose outermost function is NAME.
"""
import os
import subprocess
import sys


def names(lib, addrs):
    out = subprocess.run(["addr2line", "-f", "-C", "-e", lib] + ["%x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    got = {}
    for i, a in enumerate(addrs):
        fn, where = out[2 * i], out[2 * i + 1]
        f = os.path.normpath(where.split(":")[0])
        for top in ("/policy/", "/interpose/", "/driver/", "/include/"):
            if top in f:
                f = f[f.index(top) + 1:]
        got[a] = (fn, f)
    return got


def calls(events):
    """The program's calls: lists of (enter, addr) from a depth-0 entry to its exit."""
    depth, cur = 0, None
    for enter, a in events:
        if enter:
            if depth == 0:
                cur = []
            depth += 1
        if cur is not None:
            cur.append((enter, a))
        if not enter:
            depth -= 1
            if depth == 0 and cur:
                yield cur
                cur = None


def rooms(call, nm):
    stack, entered, returns, stays, files, order = [], 0, 0, 0, set(), []
    for enter, a in call:
        f = nm[a][1]
        if enter:
            if stack and stack[-1] != f:
                entered += 1
                order.append(f)
            elif stack:
                stays += 1
            else:
                order.append(f)
            files.add(f)
            stack.append(f)
        else:
            stack.pop()
            if stack and stack[-1] != f:
                returns += 1
    return entered, returns, stays, files, order


def main():
    trace, lib, picks = sys.argv[1], sys.argv[2], sys.argv[3:]
    events = []
    for line in open(trace):
        k, a = line.split()
        events.append((k == ">", int(a, 16)))
    nm = names(lib, sorted({a for _, a in events}))
    seen = {}
    want = {p.rsplit(":", 1)[0]: int(p.rsplit(":", 1)[1]) for p in picks}
    for call in calls(events):
        top = nm[call[0][1]][0]
        seen[top] = seen.get(top, 0) + 1
        if want.get(top) != seen[top]:
            continue
        entered, returns, stays, files, order = rooms(call, nm)
        print("%s (call %d): %d files, %d rooms entered, %d returns, %d stays" %
              (top, seen[top], len(files), entered, returns, stays))
        print("  files: " + " ".join(sorted(files)))
        print("  rooms in order: " + " > ".join(order))
    missing = [p for p in want if seen.get(p, 0) < want[p]]
    if missing:
        print("path: no such call: %s (calls seen: %s)" % (", ".join(missing),
              ", ".join("%s %d" % kv for kv in sorted(seen.items()))), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
