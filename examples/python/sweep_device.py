#!/usr/bin/env python3
"""sweep_device.py - sweep one parameter of a CXL device through libcxlsim's Python bindings and plot it.

    sweep_device.py [--device asic] [--key link.width] [--values 1,2,4,8,16] [--plot out.png] [--csv out.csv]

For each value: the device with KEY=VALUE (as `cxlsim probe --set KEY=VALUE --quick`), its idle read
latency and its read bandwidth (all requesters streaming). Prints a table; --plot draws both against the
value with matplotlib when it is installed (python3-matplotlib), else says so and still prints the table.
The bindings are found as installed (PREFIX/share/cxlsim/python) or from $PYTHONPATH and $CXLSIM_LIBRARY.
"""
import argparse
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
for guess in (os.path.join(here, "..", "..", "python"), os.path.join(here, "..", "python")):
    if os.path.isdir(os.path.join(guess, "cxlsim")):
        sys.path.append(guess)
import cxlsim  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="asic")
    ap.add_argument("--key", default="link.width")
    ap.add_argument("--values", default="1,2,4,8,16")
    ap.add_argument("--plot", metavar="FILE")
    ap.add_argument("--csv", metavar="FILE")
    a = ap.parse_args()
    rows = []
    for v in a.values.split(","):
        try:
            dev = cxlsim.Device(a.device, sets={a.key: v})
            r = dev.probe(quick=True, mixes="1:0")
        except cxlsim.CxlsimError as e:
            print("sweep_device: %s=%s: %s" % (a.key, v, e), file=sys.stderr)
            return 3
        rows.append((v, r["idle_read_latency_ns"], r["bandwidth"][0]["gbps"]))
    print("%-12s %18s %16s" % (a.key, "idle latency ns", "read GB/s"))
    for v, lat, bw in rows:
        print("%-12s %18.1f %16.2f" % (v, lat, bw))
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("%s,idle_read_latency_ns,read_gbps\n" % a.key)
            for v, lat, bw in rows:
                f.write("%s,%.3f,%.4f\n" % (v, lat, bw))
    if a.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("sweep_device: matplotlib not installed (apt-get install python3-matplotlib): no plot",
                  file=sys.stderr)
            return 0
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [str(v) for v, _, _ in rows]
        ax.plot(xs, [bw for _, _, bw in rows], "o-", label="read bandwidth")
        ax.set_xlabel(a.key)
        ax.set_ylabel("GB/s")
        ax2 = ax.twinx()
        ax2.plot(xs, [lat for _, lat, _ in rows], "s--", color="tab:red", label="idle latency")
        ax2.set_ylabel("ns")
        ax.set_title("%s: %s swept (cxlsim %s)" % (a.device, a.key, cxlsim.version()))
        fig.legend(loc="center right", bbox_to_anchor=(0.85, 0.5))
        fig.tight_layout()
        fig.savefig(a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
