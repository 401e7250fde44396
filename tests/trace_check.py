#!/usr/bin/env python3
"""trace_check.py - schema-level checker of a Chrome trace (JSON object format) as cxlsim writes it.

    trace_check.py FILE [FILE...]      FILE may end in .gz (gzip)

Checks what Perfetto's JSON importer relies on, with exact (decimal) arithmetic on timestamps:
- the file parses as JSON: an object with a "traceEvents" array;
- every event has "ph" and "pid" and "name"; every event but metadata has a numeric "ts" >= 0;
- slices (ph "X") have "tid", "cat" (non-empty string), "dur" >= 0, and "args" an object when present;
- on each track (pid, tid) the slices nest or are disjoint: none starts inside another and ends after it;
- counters (ph "C") have "args" mapping series names to numbers;
- flows: every "s" has one "f" with the same "id" and "cat", not earlier than it, both on known tracks;
- metadata (ph "M") names every process and every thread that carries a slice.
Prints one line per file ("FILE: N slices on T tracks, C counter samples, F flows") and exits 0, or
prints the first problems and exits 1. Python standard library only.
"""
import decimal
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)


def check(path):
    problems = []

    def bad(msg):
        if len(problems) < 20:
            problems.append(msg)

    try:
        doc = load(path)
    except (OSError, ValueError, EOFError) as e:
        return [f"does not parse: {e}"], ""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["not an object with a traceEvents array"], ""
    tracks = {}
    named_pids, named_threads = set(), set()
    counters = 0
    flows_s, flows_f = {}, {}
    for i, e in enumerate(doc["traceEvents"]):
        where = f"event {i}"
        if not isinstance(e, dict):
            bad(f"{where}: not an object")
            continue
        ph, pid = e.get("ph"), e.get("pid")
        if not isinstance(ph, str) or not isinstance(e.get("name"), str) or not isinstance(pid, decimal.Decimal):
            bad(f"{where}: ph, name and pid are required ({e})")
            continue
        if ph == "M":
            args = e.get("args")
            if not isinstance(args, dict):
                bad(f"{where}: metadata without args")
            elif e["name"] in ("process_name", "thread_name") and not isinstance(args.get("name"), str):
                bad(f"{where}: {e['name']} without args.name")
            elif e["name"] == "process_name":
                named_pids.add(pid)
            elif e["name"] == "thread_name":
                named_threads.add((pid, e.get("tid")))
            continue
        ts = e.get("ts")
        if not isinstance(ts, decimal.Decimal) or ts < 0:
            bad(f"{where}: ts missing or negative ({e})")
            continue
        if ph == "X":
            dur, tid, cat = e.get("dur"), e.get("tid"), e.get("cat")
            if not isinstance(dur, decimal.Decimal) or dur < 0 or not isinstance(tid, decimal.Decimal):
                bad(f"{where}: slice without tid or dur >= 0 ({e})")
                continue
            if not isinstance(cat, str) or not cat:
                bad(f"{where}: slice without cat ({e})")
            if "args" in e and not isinstance(e["args"], dict):
                bad(f"{where}: args is not an object")
            tracks.setdefault((pid, tid), []).append((ts, ts + dur, e["name"]))
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args or not all(isinstance(v, decimal.Decimal) for v in args.values()):
                bad(f"{where}: counter without numeric args ({e})")
            counters += 1
        elif ph in ("s", "f"):
            key = (e.get("id"), e.get("cat"))
            if key[0] is None or not isinstance(key[1], str):
                bad(f"{where}: flow without id or cat")
                continue
            side = flows_s if ph == "s" else flows_f
            if key in side:
                bad(f"{where}: flow id {key} has two '{ph}' events")
            side[key] = (ts, (pid, e.get("tid")))
        else:
            bad(f"{where}: unexpected ph '{ph}'")
    # nesting per track: sort by start, longer first; a stack of open slices
    for (pid, tid), sl in sorted(tracks.items()):
        sl.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for t0, t1, name in sl:
            while stack and stack[-1][1] <= t0:
                stack.pop()
            if stack and t1 > stack[-1][1]:
                p = stack[-1]
                bad(f"track pid {pid} tid {tid}: '{name}' [{t0}, {t1}] partially overlaps '{p[2]}' [{p[0]}, {p[1]}]")
            stack.append((t0, t1, name))
        if pid not in named_pids:
            bad(f"track pid {pid}: no process_name")
        if (pid, tid) not in named_threads:
            bad(f"track pid {pid} tid {tid}: no thread_name")
    for key, (ts, trk) in flows_s.items():
        if key not in flows_f:
            bad(f"flow {key}: start without finish")
        elif flows_f[key][0] < ts:
            bad(f"flow {key}: finishes before it starts")
        elif trk not in tracks or flows_f[key][1] not in tracks:
            bad(f"flow {key}: on a track without slices")
    for key in flows_f:
        if key not in flows_s:
            bad(f"flow {key}: finish without start")
    nslices = sum(len(s) for s in tracks.values())
    return problems, f"{nslices} slices on {len(tracks)} tracks, {counters} counter samples, {len(flows_s)} flows"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    rc = 0
    for path in argv[1:]:
        problems, summary = check(path)
        if problems:
            rc = 1
            for p in problems:
                print(f"{path}: {p}")
        else:
            print(f"{path}: {summary}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
