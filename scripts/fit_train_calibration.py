#!/usr/bin/env python3
"""Fit the training model's calibrated constants on the given validation tables, with a leave-one-out figure.

The given tables (docs/validation.md): Korthikanti et al. Table 5 (configs/validation/korthikanti/, measured.csv)
and Narayanan et al. Table 1 (configs/validation/narayanan/, data/validation/narayanan-sc21-table1.csv). Every row
is run with `cxlsim train ROW --set KEY=VALUE ...` over a grid of the constants; the fit is the grid point of least
mean absolute error over the rows of the tables named by --fit-on (korthikanti, narayanan or all). Leave-one-out:
for each row, the grid point of least mean absolute error over the other fitted rows, and that row's error at it
(rows outside the fit are predicted with the fit itself). Nothing else is fitted and no row has its own value;
docs/calibration.md lists the result.

usage: scripts/fit_train_calibration.py [--cxlsim build/cxlsim] [-j 2] [--fit-on all] [--grid KEY=V1,V2,... ...]
                                       [--dump FILE] [--load FILE ...]
Prints one line per grid point, the fit, both tables' figures at the fit, and the leave-one-out errors.
--dump FILE writes every row's error at every grid point (JSON); --load FILE reads such a file instead of running
the rows, so the fit on another table (--fit-on) costs no second run; --load repeated joins several dumps of the
same keys and rows (grids run one after another) into one set of points, a point in more than one kept once.
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_GRID = [
    "gpu.memory_efficiency=0.55,0.60,0.65,0.70,0.75,0.80,0.85,0.90",
    "training.host_overhead_microbatch=0us,250us,500us,750us,1000us,1500us",
]


def rows():
    out = []
    with open(os.path.join(ROOT, "configs/validation/korthikanti/measured.csv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("model,"):
                continue
            fld = line.strip().split(",")
            name = "%s-%s" % (fld[0].lower(), "full" if fld[12] == "full" else "sel")
            out.append(("korthikanti", name, float(fld[13])))
    with open(os.path.join(ROOT, "data/validation/narayanan-sc21-table1.csv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("model,"):
                continue
            fld = line.strip().split(",")
            out.append(("narayanan", fld[0].lower(), float(fld[15])))
    return out


def run(cxlsim, table, name, sets):
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        cmd = [cxlsim, "train", os.path.join(ROOT, "configs/validation", table, name + ".yaml"), "--json", tmp.name]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(tmp.name) as f:
            return json.load(f)["iteration_time_s"]


def summary(errs, R, table):
    e = [x for x, r in zip(errs, R) if r[0] == table]
    return (100 * sum(map(abs, e)) / len(e), 100 * max(map(abs, e)), 100 * sum(e) / len(e))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cxlsim", default=os.path.join(ROOT, "build", "cxlsim"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--fit-on", default="all", choices=["all", "korthikanti", "narayanan"])
    ap.add_argument("--grid", action="append", help="KEY=V1,V2,... (repeatable); default: %s" % DEFAULT_GRID)
    ap.add_argument("--dump", help="write every row's error at every grid point to this JSON file")
    ap.add_argument("--load", action="append",
                    help="read the errors from a --dump file instead of running the rows (repeatable: joined)")
    a = ap.parse_args()
    grid = a.grid or DEFAULT_GRID
    keys = [g.split("=", 1)[0] for g in grid]
    values = [g.split("=", 1)[1].split(",") for g in grid]
    points = list(itertools.product(*values))
    R = rows()
    if a.load:
        keys, points, err = None, [], {}
        for path in a.load:
            with open(path) as f:
                d = json.load(f)
            if keys is not None and d["keys"] != keys:
                sys.exit("%s: keys %s, not %s as the first --load" % (path, d["keys"], keys))
            if d["rows"] != [r[1] for r in R]:
                sys.exit("%s: rows %s, not the tables' %s" % (path, d["rows"], [r[1] for r in R]))
            keys = d["keys"]
            for p, e in zip(d["points"], d["errors"]):
                if tuple(p) not in err:
                    points.append(tuple(p))
                    err[tuple(p)] = e
    else:
        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
            for p in points:
                sets = ["%s=%s" % kv for kv in zip(keys, p)]
                for i, (table, name, _) in enumerate(R):
                    jobs[(p, i)] = ex.submit(run, a.cxlsim, table, name, sets)
        err = {p: [jobs[(p, i)].result() / R[i][2] - 1 for i in range(len(R))] for p in points}
    if a.dump:
        with open(a.dump, "w") as f:
            json.dump({"keys": keys, "rows": [r[1] for r in R], "points": [list(p) for p in points],
                       "errors": [err[p] for p in points]}, f)
    fit = [i for i, r in enumerate(R) if a.fit_on in ("all", r[0])]
    mae = {p: sum(abs(e[i]) for i in fit) / len(fit) for p, e in err.items()}
    for p in points:
        k = summary(err[p], R, "korthikanti")
        n = summary(err[p], R, "narayanan")
        print("%-40s all %.2f | K abs %.2f max %.2f signed %+.2f | N abs %.2f max %.2f signed %+.2f"
              % (" ".join(p), 100 * mae[p], *k, *n))
    best = min(points, key=lambda p: mae[p])
    print("\nfit (least mean |error| over the %d rows of %s): %s"
          % (len(fit), a.fit_on, ", ".join("%s=%s" % kv for kv in zip(keys, best))))
    for t in ("korthikanti", "narayanan"):
        print("  %-12s mean |error| %.2f %%, max %.2f %%, mean signed %+.2f %%" % ((t,) + summary(err[best], R, t)))
    print("\nleave-one-out (each fitted row predicted with the constants fitted on the other %d):" % (len(fit) - 1))
    loo = []
    for i, (table, name, _) in enumerate(R):
        p = min(points, key=lambda q: (sum(abs(err[q][j]) for j in fit if j != i))) if i in fit else best
        loo.append(err[p][i])
        print("  %-12s %-18s %+6.2f %%  (fitted on the others: %s)" % (table, name, 100 * err[p][i], " ".join(p)))
    for t in ("korthikanti", "narayanan"):
        print("  %-12s leave-one-out mean |error| %.2f %%, max %.2f %%, mean signed %+.2f %%" % ((t,) + summary(loo, R, t)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
