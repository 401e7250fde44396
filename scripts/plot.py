#!/usr/bin/env python3
"""plot.py - charts from cxlsim's JSON and CSV outputs (PNG or SVG, chosen by each output's suffix).

  scripts/plot.py latency   PROBE...  -o curves.png     loaded-latency curves of several devices or mixes
                                                        (probe --json, or probe --csv: one curve per file,
                                                        one per mix with --mixes)
  scripts/plot.py bandwidth PROBE...  -o bw.svg         bandwidth per read:write mix, a bar per device
                                                        (probe --json)
  scripts/plot.py sweep SWEEP --x AXIS -o t.png         a sweep's iteration time (or --y COLUMN) against an
                                                        axis, a line per value of --group COLUMN (sweep
                                                        --csv or --jsonl; ok points only; where other axes
                                                        vary too, the best value at each x)
  scripts/plot.py breakdown TRAIN...  -o b.png          the iteration's breakdown as stacked bars (train
                                                        --json files, or a sweep's ok points)
  scripts/plot.py memory MEMORY...    -o m.png          memory per GPU, stacked, against the HBM capacity
                                                        (memory --json files, or a sweep's points)

Common options: -o/--out FILE (repeatable: the same chart as .png and .svg), --title TEXT, --label NAME
(repeatable, one per input file, replacing the device or file names in the legend). `latency` takes
--p99 (the 99th percentile instead of the mean); `sweep` takes --x, --y, --group, --logx.

Needs matplotlib (Debian: apt-get install python3-matplotlib; optional for cxlsim itself). Exit status: 0,
2 for a bad command line, 3 for an input that is not the cxlsim output the chart needs (the message names
the file and what is missing), 4 when matplotlib is missing, 5 when a file cannot be read or written.
"""
import argparse
import csv
import json
import os
import sys

EXIT_USAGE, EXIT_INPUT, EXIT_DEPENDENCY, EXIT_IO = 2, 3, 4, 5
DEFAULT_MIXES = [("read_only", "100:0"), ("rw_2_1", "2:1"), ("rw_1_1", "1:1"), ("write_only", "0:100")]
BREAKDOWN = [("compute", "compute"), ("exposed_tp_comm", "exposed TP comm."), ("exposed_pp_comm", "exposed PP comm."),
             ("exposed_dp_comm", "exposed DP comm."), ("pipeline_bubble", "pipeline bubble"), ("cxl_stall", "CXL stall")]
MEMORY = [("weights", "weights"), ("gradients", "gradients"), ("optimizer", "optimizer states"),
          ("activations", "activations")]
SWEEP_Y = {"train": "iteration_time_s", "memory": "total_gib", "probe": "idle_read_latency_ns"}


class PlotError(Exception):
    def __init__(self, status, msg):
        super().__init__(msg)
        self.status = status


def bad_input(path, msg):
    return PlotError(EXIT_INPUT, f"{path}: {msg}")


def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise PlotError(EXIT_IO, f"{path}: cannot read: {e.strerror if isinstance(e, OSError) else e}")


def load_json(path):
    try:
        d = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise bad_input(path, f"not JSON (line {e.lineno}, column {e.colno}: {e.msg})")
    if not isinstance(d, dict):
        raise bad_input(path, "not a cxlsim JSON output (an object was expected)")
    return d


def number(v, path, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise bad_input(path, f"'{what}' is not a number ({v!r})")
    return float(v)


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


# ---- inputs ----

def probe_curves(path):
    """[(mix label or None, device, [(achieved_gbps, mean_ns, p99_ns)])] of a probe --json or --csv."""
    if path.endswith(".csv"):
        rows = list(csv.DictReader(read_text(path).splitlines()))
        need = {"achieved_gbps", "mean_latency_ns", "p99_latency_ns"}
        if not rows or not need <= set(rows[0]):
            raise bad_input(path, "not a probe --csv curve (columns achieved_gbps, mean_latency_ns, p99_latency_ns)")
        curves = {}
        for i, r in enumerate(rows, 2):
            try:
                pt = tuple(float(r[k]) if r[k] != "" else None for k in ("achieved_gbps", "mean_latency_ns",
                                                                          "p99_latency_ns"))
            except ValueError:
                raise bad_input(path, f"line {i}: a value that is not a number")
            curves.setdefault(r.get("mix"), []).append(pt)
        return [(mix, stem(path), pts) for mix, pts in curves.items()]
    d = load_json(path)
    if "curves" in d:
        sets = [(f"{c.get('read')}:{c.get('write')}", c.get("points")) for c in d["curves"]]
    elif "curve" in d:
        sets = [(None, d["curve"])]
    else:
        raise bad_input(path, "no loaded-latency curve ('curve'): give cxlsim probe --json or --csv outputs")
    out = []
    for mix, pts in sets:
        if not isinstance(pts, list):
            raise bad_input(path, "'curve' is not a list of points")
        out.append((mix, str(d.get("device", stem(path))),
                    [(p.get("achieved_gbps"), p.get("mean_latency_ns"), p.get("p99_latency_ns")) for p in pts]))
    return out


def sweep_rows(path):
    """(axes, rows as dicts of strings or None) of a sweep --csv or --jsonl."""
    text = read_text(path)
    if path.endswith(".jsonl") or text.lstrip().startswith("{"):
        axes, rows = None, []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                raise bad_input(path, f"line {i}: not JSON ({e.msg})")
            if not isinstance(r, dict) or "inputs" not in r or "status" not in r:
                raise bad_input(path, f"line {i}: not a sweep row (members 'inputs' and 'status')")
            axes = axes or list(r["inputs"])
            row = {k: (None if v is None else str(v)) for k, v in r.items() if k != "inputs"}
            row.update(r["inputs"])
            rows.append(row)
        return axes or [], rows
    rows = list(csv.DictReader(text.splitlines()))
    if not rows or "point" not in rows[0] or "status" not in rows[0]:
        raise bad_input(path, "not a sweep output (columns 'point' ... 'status'): give cxlsim sweep --csv or --jsonl")
    cols = list(rows[0])
    axes = cols[1:cols.index("status")]
    return axes, [{k: (v if v != "" else None) for k, v in r.items()} for r in rows]


def is_sweep(path):
    return path.endswith(".csv") or path.endswith(".jsonl")


def point_label(axes, r):
    return ", ".join(f"{a.split('.')[-1]}={r[a]}" for a in axes)


def stacked_sets(paths, parts, member, suffix, what):
    """[(label, [values of parts], capacity or None)] from JSON outputs' `member` or sweeps' columns."""
    bars = []
    for path in paths:
        if is_sweep(path):
            axes, rows = sweep_rows(path)
            want = "ok" if what == "breakdown" else None
            before = len(bars)
            for r in rows:
                if (want and r["status"] != want) or r.get(parts[0][0] + suffix) is None:
                    continue
                vals = [float(r.get(k + suffix) or 0) for k, _ in parts]
                cap = float(r["hbm_gib"]) if r.get("hbm_gib") else None
                bars.append((f"{r['point']}: {point_label(axes, r)}", vals, cap))
            if len(bars) == before:
                raise bad_input(path, f"no point with a {what} (none ran?)")
            continue
        d = load_json(path)
        m = d.get(member)
        if not isinstance(m, dict):
            hint = "train --json" if what == "breakdown" else "memory --json"
            raise bad_input(path, f"no '{member}': give cxlsim {hint} outputs or a sweep's --csv/--jsonl")
        vals = [number(m.get(k, 0), path, f"{member}.{k}") for k, _ in parts]
        cap = number(d["hbm_gib"], path, "hbm_gib") if "hbm_gib" in d else None
        if what == "memory" and cap is None:
            raise bad_input(path, "no 'hbm_gib' (the GPU's capacity): give cxlsim memory --json outputs")
        bars.append((str(d.get("experiment", stem(path))), vals, cap))
    return bars


# ---- charts ----

def pyplot():
    """matplotlib's pyplot, imported once the inputs have been read (bad inputs fail fast without it)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "cxlsim"      # the same SVG for the same inputs
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError(EXIT_DEPENDENCY, "needs matplotlib: apt-get install python3-matplotlib (Debian), or pip "
                        "install matplotlib")
    return plt


def chart_latency(a):
    col, lines = 2 if a.p99 else 1, []
    for i, path in enumerate(a.inputs):
        for mix, device, pts in probe_curves(path):
            label = (a.label[i] if a.label else device) + (f" {mix}" if mix is not None else "")
            pts = [p for p in pts if p[0] is not None and p[col] is not None]
            if pts:
                lines.append((label, pts))
    if not lines:
        raise bad_input(a.inputs[0], "no curve point with a latency")
    fig, ax = pyplot().subplots(figsize=(7, 4.5))
    for label, pts in lines:
        ax.plot([p[0] for p in pts], [p[col] for p in pts], marker="o", markersize=3, label=label)
    ax.set_xlabel("achieved bandwidth (GB/s)")
    ax.set_ylabel(("p99" if a.p99 else "mean") + " read latency (ns)")
    ax.set_title(a.title or "Loaded latency")
    return fig, ax


def chart_bandwidth(a):
    series = []
    for i, path in enumerate(a.inputs):
        d = load_json(path)
        bw = d.get("bandwidth_gbps")
        if not isinstance(bw, dict) or not bw:
            raise bad_input(path, "no 'bandwidth_gbps': give cxlsim probe --json outputs")
        mixes = [(m, bw[k]) for k, m in DEFAULT_MIXES if k in bw] or list(bw.items())
        series.append((a.label[i] if a.label else str(d.get("device", stem(path))),
                       [(m, number(v, path, f"bandwidth_gbps.{m}")) for m, v in mixes]))
    mixes = []
    for _, vals in series:
        mixes += [m for m, _ in vals if m not in mixes]
    fig, ax = pyplot().subplots(figsize=(max(5, 1.2 * len(mixes) + 2), 4.5))
    width = 0.8 / len(series)
    for j, (label, vals) in enumerate(series):
        v = dict(vals)
        xs = [i + (j - (len(series) - 1) / 2) * width for i, m in enumerate(mixes) if m in v]
        ax.bar(xs, [v[m] for m in mixes if m in v], width, label=label)
    ax.set_xticks(range(len(mixes)))
    ax.set_xticklabels(mixes)
    ax.set_xlabel("read:write mix")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_title(a.title or "Bandwidth per read:write mix")
    return fig, ax


def sweep_value(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def chart_sweep(a):
    if len(a.inputs) != 1:
        raise PlotError(EXIT_USAGE, "sweep: one sweep output (--csv or --jsonl) at a time")
    path = a.inputs[0]
    axes, rows = sweep_rows(path)
    cols = list(rows[0]) if rows else []
    if not a.x:
        raise PlotError(EXIT_USAGE, f"sweep: name the axis of the x axis with --x; the axes of {path}: "
                        f"{', '.join(axes)}")
    y = a.y or next((c for c in SWEEP_Y.values() if c in cols), None)
    for opt, c in (("--x", a.x), ("--y", y), ("--group", a.group)):
        if c is not None and c not in cols:
            raise PlotError(EXIT_USAGE, f"sweep: {opt} {c}: not a column of {path}; axes: {', '.join(axes)}; "
                            f"other columns: {', '.join(c2 for c2 in cols if c2 not in axes)}")
    ok = [r for r in rows if r["status"] == "ok" and r.get(y) is not None and r.get(a.x) is not None]
    if not ok:
        raise bad_input(path, f"no point with status ok and a value of {y} (statuses: "
                        f"{', '.join(sorted(set(r['status'] for r in rows)))})")
    xs = [sweep_value(r[a.x]) for r in ok]
    numeric = all(isinstance(v, float) for v in xs)
    order = sorted(set(xs)) if numeric else list(dict.fromkeys(xs))
    groups = {}
    for r in ok:
        groups.setdefault(r[a.group] if a.group else None, []).append(r)
    others = [c for c in axes if c not in (a.x, a.group)]
    fig, ax = pyplot().subplots(figsize=(7, 4.5))
    for g, rs in sorted(groups.items(), key=lambda kv: (not isinstance(sweep_value(kv[0]), float),
                                                          sweep_value(kv[0]) if isinstance(sweep_value(kv[0]), float)
                                                          else 0, str(kv[0]))):
        best = {}
        for r in rs:
            xv, yv = sweep_value(r[a.x]), float(r[y])
            best[xv] = min(best.get(xv, yv), yv)
        pts = [(o, best[o]) for o in order if o in best]
        label = f"{a.group.split('.')[-1]}={g}" if a.group else y
        ax.plot([order.index(p[0]) if not numeric else p[0] for p in pts], [p[1] for p in pts], marker="o",
                label=label)
    if not numeric:
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([str(o) for o in order])
    if a.logx and numeric:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(a.x)
    ax.set_ylabel(y + (f" (best over {', '.join(others)})" if others and len(ok) > len(order) * len(groups)
                       else ""))
    ax.set_title(a.title or f"{stem(path)}: {y} against {a.x}")
    return fig, ax


def stacked(a, parts, bars, ylabel, title):
    plt = pyplot()
    labels = [a.label[i] if a.label and i < len(a.label) else b[0] for i, b in enumerate(bars)]
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(bars) + 3), 4.5))
    bottom = [0.0] * len(bars)
    for j, (_, name) in enumerate(parts):
        vals = [b[1][j] for b in bars]
        ax.bar(range(len(bars)), vals, 0.6, bottom=bottom, label=name)
        bottom = [s + v for s, v in zip(bottom, vals)]
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels(labels, rotation=30 if len(bars) > 3 else 0, ha="right" if len(bars) > 3 else "center",
                       fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(a.title or title)
    return fig, ax


def chart_breakdown(a):
    bars = stacked_sets(a.inputs, BREAKDOWN, "breakdown_s", "_s", "breakdown")
    return stacked(a, BREAKDOWN, bars, "time per iteration (s)", "Iteration breakdown")


def chart_memory(a):
    bars = stacked_sets(a.inputs, MEMORY, "memory_per_gpu_gib", "_gib", "memory")
    fig, ax = stacked(a, MEMORY, bars, "memory per GPU (GiB)", "Memory per GPU against HBM capacity")
    caps = [b[2] for b in bars]
    if any(c is not None for c in caps):
        ax.scatter(range(len(bars)), [c if c is not None else float("nan") for c in caps], marker="_", s=900,
                   color="black", linewidths=2, zorder=3, label="HBM capacity")
    return fig, ax


CHARTS = {"latency": chart_latency, "bandwidth": chart_bandwidth, "sweep": chart_sweep,
          "breakdown": chart_breakdown, "memory": chart_memory}


def parse(argv):
    p = argparse.ArgumentParser(prog="plot.py", description="Charts from cxlsim's JSON and CSV outputs.",
                                epilog="See the top of scripts/plot.py and docs/sweeps.md \"Plots\".")
    p.add_argument("kind", choices=sorted(CHARTS), help="the chart")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="cxlsim outputs (JSON, CSV, JSON lines)")
    p.add_argument("-o", "--out", action="append", required=True, help="PNG or SVG file (repeatable)")
    p.add_argument("--title")
    p.add_argument("--label", action="append", help="legend name of each input, in order (repeatable)")
    p.add_argument("--p99", action="store_true", help="latency: the p99 latency instead of the mean")
    p.add_argument("--x", help="sweep: the axis (column) of the x axis")
    p.add_argument("--y", help="sweep: the column plotted (default iteration_time_s; memory: total_gib; "
                   "probe: idle_read_latency_ns)")
    p.add_argument("--group", help="sweep: a line per value of this column")
    p.add_argument("--logx", action="store_true", help="sweep: a log2 x axis")
    a = p.parse_args(argv)
    for o in a.out:
        if os.path.splitext(o)[1].lower() not in (".png", ".svg"):
            p.error(f"-o {o}: the suffix names the format: .png or .svg")
    if a.label and len(a.label) != len(a.inputs) and a.kind != "breakdown" and a.kind != "memory":
        p.error(f"--label given {len(a.label)} times for {len(a.inputs)} inputs: one per input")
    return a


def main(argv):
    a = parse(argv)
    try:
        fig, ax = CHARTS[a.kind](a)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        fig.tight_layout()
        for o in a.out:
            try:
                fig.savefig(o, metadata={"Date": None} if o.lower().endswith(".svg") else {"Software": None})
            except OSError as e:
                raise PlotError(EXIT_IO, f"{o}: cannot write: {e.strerror}")
        pyplot().close(fig)
    except PlotError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return e.status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
