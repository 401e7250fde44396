#!/usr/bin/env python3
"""Longest register-to-register path of a Yosys-mapped UltraScale+ netlist, in LUT levels.

    python3 scripts/lut_depth.py NETLIST.json [--module NAME] [--ltp LTP.txt] [--tsv FILE]
                                 [--muxf-weight W] [--carry-weight W] [--carry-step W] [--lutram-weight W]

NETLIST.json is Yosys `write_json` output after `synth_xilinx` (scripts/rtl_synth.sh writes one per
module); without --module every module that is not a black box is measured. For each module it prints
the longest combinational path from a start point to an end point, its level count, and the cells on
it. docs/rtl-synthesis.md ("Logic depth") says why the weights are what they are.

Start points: module input ports; outputs of flip-flops (FD*, LD*), block RAM (RAMB*), UltraRAM,
DSP48E2, SRLC32E's cascade output Q31, and of every cell that is not a known combinational primitive
(sub-module instances of a hierarchical netlist, black boxes). End points: module output ports and the
inputs of those same cells. Constants (VCC/GND, '0'/'1'/'x') start nothing.

Levels (a "LUT level" is one LUT plus the routed net into the next cell):
  LUT1..LUT6, INV              1 each (Vivado implements INV as a LUT1)
  MUXF7 / MUXF8 / MUXF9        --muxf-weight (default 0.25): in the slice of the LUTs it joins, no
                               general routing in between
  CARRY4 / CARRY8 entered      --carry-weight (default 0.5) from S, DI or CYINIT (the LUT feeding
                               it is counted already)
  CARRY4 after a CARRY4        --carry-step (default 0.125) from CI: the dedicated carry path, so a
                               64-bit compare (16 CARRY4) adds 0.5 + 15 * 0.125 levels; CARRY8 twice
                               that (8 bits)
  LUT RAM read (RAM*X*, RAM*M*, SRL16E/SRLC16E/SRLC32E)
                               --lutram-weight (default 1): the read is a LUT, combinational from the
                               read address (and from the stored bits: a path may start there); the
                               write side (data, write enable, write address) is an end point
A DSP48E2 is an end point even when Yosys left its internal registers off (then it is really a
combinational block of several ns); such DSPs are counted and reported.

--ltp FILE: the output of Yosys `ltp` for the same netlist; its cell count is printed beside ours.
--tsv FILE: also write one line per module: module, levels, LUTs, MUXFs, CARRY cells, LUT RAM reads,
cells on the path, ltp length ("-" if unknown), DSPs without registers, register-to-register levels.

Two figures per module: the longest path of all (ports included: a port's path continues in the
module on the other side, so in a hierarchical run this is the module's share of a longer path) and
the longest from a sequential start to a sequential end (the "register to register" figure; printed
with its own path when it is shorter).

Exit status: 0 measured, 1 a file could not be read or is not a Yosys JSON netlist, 2 usage.
Cost: linear in the netlist (two topological passes: all paths, then register to register only).
"""

import argparse
import json
import re
import sys
from collections import deque

LUT_TYPES = {"LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "INV"}
MUXF_TYPES = {"MUXF7", "MUXF8", "MUXF9"}
CARRY_TYPES = {"CARRY4": 4, "CARRY8": 8}
CONST_CELLS = {"VCC", "GND"}
# Output ports of the primitives handled here, for a netlist written without their port directions
# (a module netlist from which the cell library was deleted)
KNOWN_OUTPUTS = {
    "MUXF7": {"O"}, "MUXF8": {"O"}, "MUXF9": {"O"}, "INV": {"O"},
    "CARRY4": {"O", "CO"}, "CARRY8": {"O", "CO"},
    "SRL16E": {"Q"}, "SRLC16E": {"Q", "Q15"}, "SRLC32E": {"Q", "Q31"},
    "FDRE": {"Q"}, "FDSE": {"Q"}, "FDCE": {"Q"}, "FDPE": {"Q"},
    "FDRE_1": {"Q"}, "FDSE_1": {"Q"}, "FDCE_1": {"Q"}, "FDPE_1": {"Q"},
    "VCC": {"P"}, "GND": {"G"},
}
for _t in ("LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6"):
    KNOWN_OUTPUTS[_t] = {"O"}
LUTRAM_RE = re.compile(r"^RAM(16|32|64|128|256|512)X(1|2|4|8)[SDQ]$|^RAM(32|64)M(8|16)?$")
SRL_TYPES = {"SRL16E", "SRLC16E", "SRLC32E"}


class InputError(Exception):
    """A netlist that cannot be measured: the message says why."""


def die(msg, code=1):
    print(f"lut_depth.py: {msg}", file=sys.stderr)
    sys.exit(code)


def cell_kind(ctype):
    """'lut', 'muxf', 'carry', 'lutram' (combinational read) or 'end' (start / end point)."""
    if ctype in LUT_TYPES:
        return "lut"
    if ctype in MUXF_TYPES:
        return "muxf"
    if ctype in CARRY_TYPES:
        return "carry"
    if ctype in SRL_TYPES or LUTRAM_RE.match(ctype):
        return "lutram"
    return "end"


def lutram_read_pairs(ctype, ports):
    """(address port, data output port) pairs of a LUT RAM / SRL's combinational read.

    RAM32M/RAM64M/RAM32M16/RAM64M8: DOx reads at ADDRx. RAMnX1D: SPO at A, DPO at DPRA (a port per
    bit in the small ones: A0..A5, DPRA0..DPRA5). RAMnX1S: O at A (or A0..). SRL*: Q at A (A0..A3 in
    SRL16E). The cascade outputs (Q15, Q31) are the last stored bit: a start point, no read."""
    pairs = []
    if ctype in SRL_TYPES:
        addr = [p for p in ports if p == "A" or re.fullmatch(r"A[0-9]", p)]
        return [(a, "Q") for a in addr]
    for p in ports:
        m = re.fullmatch(r"DO([A-H])", p)
        if m:
            pairs.append(("ADDR" + m.group(1), p))
    if pairs:
        return pairs
    a_ports = [p for p in ports if p == "A" or re.fullmatch(r"A[0-9]", p)]
    dp_ports = [p for p in ports if p == "DPRA" or re.fullmatch(r"DPRA[0-9]", p)]
    for out, addr in (("O", a_ports), ("SPO", a_ports), ("DPO", dp_ports)):
        if out in ports:
            pairs.extend((a, out) for a in addr)
    return pairs


def lutram_writes(ctype, port, ports):
    """Whether an input port of a LUT RAM / SRL belongs to its write side (data, enable, address).

    SRL: D and CE (the address only reads). RAM32M/RAM64M/RAM32M16/RAM64M8: DI*, WE and the last port's
    address (ADDRD / ADDRH: it writes every port); the other ADDR* only read. RAMnX1D: DPRA only reads."""
    if ctype in SRL_TYPES:
        return port in ("D", "CE")
    addrs = sorted(p for p in ports if re.fullmatch(r"ADDR[A-H]", p))
    if addrs:
        return not port.startswith("ADDR") or port == addrs[-1]
    return not (port == "DPRA" or re.fullmatch(r"DPRA[0-9]", port))


def port_dirs(name, cell, drivers_known):
    """Direction of each connected port: from the JSON, else the table above, else a guess."""
    dirs = cell.get("port_directions")
    if dirs:
        return dirs
    ctype = cell["type"]
    if ctype in KNOWN_OUTPUTS:
        outs = KNOWN_OUTPUTS[ctype]
        return {p: ("output" if p in outs else "input") for p in cell["connections"]}
    if cell_kind(ctype) == "lutram":
        outs = {"O", "SPO", "DPO", "Q", "Q15", "Q31"} | {"DO" + c for c in "ABCDEFGH"}
        return {p: ("output" if p in outs else "input") for p in cell["connections"]}
    # an unknown cell (a sub-module instance whose module was deleted): a port whose bits are all
    # driven elsewhere is an input, the rest outputs. Only an end point's ports are guessed, so a
    # wrong guess moves a path's start or end, never adds levels through the cell.
    guess = {}
    for p, bits in cell["connections"].items():
        ints = [b for b in bits if isinstance(b, int)]
        guess[p] = "input" if ints and all(b in drivers_known for b in ints) else "output"
    return guess


def split_carries(cells):
    """The cells with each CARRY4 / CARRY8 split into one cell per bit ("NAME#i").

    A carry cell has several outputs, each depending on the inputs of its own and the lower bits; as
    one node, an adder whose low sum bit feeds (through LUTs) a higher bit of the same cell would be
    a false combinational loop. Bit i reads S[i], DI[i] and, as CIN, the carry out of bit i-1 (CO[i-1],
    a net of its own in Yosys's netlist); bit 0 reads CI and CYINIT (bit 4 of a CARRY8 also CI_TOP)."""
    out = {}
    for cname, c in cells.items():
        ctype = c.get("type") if isinstance(c, dict) else None
        conns = c.get("connections") if isinstance(c, dict) else None
        if ctype not in CARRY_TYPES or not isinstance(conns, dict):
            out[cname] = c
            continue
        n = CARRY_TYPES[ctype]

        def bit(port, i):
            bits = conns.get(port, [])
            return bits[i:i + 1] if i < len(bits) else []
        for i in range(n):
            cc = {"S": bit("S", i), "DI": bit("DI", i), "O": bit("O", i), "CO": bit("CO", i)}
            if i == 0:
                cc["CI"] = conns.get("CI", [])
                cc["CYINIT"] = conns.get("CYINIT", [])
            else:
                cc["CIN"] = bit("CO", i - 1)
            if i == 4 and "CI_TOP" in conns:
                cc["CI_TOP"] = conns["CI_TOP"]
            dirs = {p: ("output" if p in ("O", "CO") else "input") for p in cc}
            out[f"{cname}#{i}"] = {"type": ctype, "connections": cc, "port_directions": dirs, "orig": cname}
    return out


def measure(mname, mod, weights, reg_only=False):
    """The longest path of one module: a dict with the figures and the path.

    reg_only: only paths that start and end at sequential cells (FF, RAM, DSP, instances), none that
    start or end at a module port (a port's path continues in the module that drives or reads it)."""
    cells = mod.get("cells", {})
    ports = mod.get("ports", {})
    if not isinstance(cells, dict) or not isinstance(ports, dict):
        raise InputError(f"module {mname}: 'cells' / 'ports' are not objects")
    cells = split_carries(cells)

    # drivers of net bits that have a known direction first (ports, cells with directions), so the
    # guess for unknown cells can tell their inputs from their outputs
    pre_driven = set()
    for pname, p in ports.items():
        if p.get("direction") == "input":
            pre_driven.update(b for b in p.get("bits", []) if isinstance(b, int))
    for cname, c in cells.items():
        if not isinstance(c, dict) or "type" not in c or not isinstance(c.get("connections"), dict):
            raise InputError(f"module {mname}: cell {cname} has no 'type' or 'connections'")
        dirs = c.get("port_directions")
        if not dirs and c["type"] in KNOWN_OUTPUTS:
            dirs = {p: ("output" if p in KNOWN_OUTPUTS[c["type"]] else "input") for p in c["connections"]}
        if dirs:
            for p, bits in c["connections"].items():
                if dirs.get(p) == "output":
                    pre_driven.update(b for b in bits if isinstance(b, int))

    # readable names of net bits (the RTL's signal names where Yosys kept them), to label paths
    names = {}
    for nname, n in (mod.get("netnames") or {}).items():
        if not isinstance(n, dict):
            continue
        hidden = bool(n.get("hide_name", 0)) or nname.startswith("$")
        for i, b in enumerate(n.get("bits", [])):
            if isinstance(b, int):
                old = names.get(b)
                cand = (hidden, len(nname), f"{nname}[{i}]" if len(n.get("bits", [])) > 1 else nname)
                if old is None or cand < old:
                    names[b] = cand

    def net(b):
        """' = name' of a net bit with a visible name, else ''."""
        n = names.get(b)
        return f" = {n[2]}" if n is not None and not n[0] else ""

    # arrival[bit] = (levels, predecessor bit or None, cell name, label of the start if a start)
    arrival = {}
    ends = []          # (bit, label): path end points
    comb = {}          # cell name -> (type, kind, {port: dir})
    readers = {}       # bit -> comb cells reading it
    driver = {}        # bit -> comb cell driving it
    dsp_noreg = 0
    n_end_cells = 0
    for pname, p in ports.items():
        d = p.get("direction")
        for i, b in enumerate(p.get("bits", [])):
            if not isinstance(b, int) or reg_only:
                continue
            label = f"input port {pname}[{i}]"
            if d == "input":
                arrival[b] = (0.0, None, None, label)
            elif d == "output":
                ends.append((b, f"output port {pname}[{i}]"))
            elif d == "inout":
                arrival[b] = (0.0, None, None, f"inout port {pname}[{i}]")
                ends.append((b, f"inout port {pname}[{i}]"))
    for cname, c in cells.items():
        ctype = c["type"]
        conns = c["connections"]
        dirs = port_dirs(cname, c, pre_driven)
        kind = cell_kind(ctype)
        if ctype in CONST_CELLS:
            continue
        if kind == "end":
            n_end_cells += 1
            if ctype == "DSP48E2":
                prm = c.get("parameters", {})
                regs = [prm.get(k, "1") for k in ("AREG", "BREG", "MREG", "PREG")]
                if all(str(v).strip("0") == "" for v in regs):
                    dsp_noreg += 1
            # a flip-flop's end point is named by the register it loads (the net on its Q)
            q = conns.get("Q", [None])[0] if ctype.startswith(("FD", "LD")) else None
            reg = net(q)[3:] if isinstance(q, int) and net(q) else ""
            for p, bits in conns.items():
                for i, b in enumerate(bits):
                    if not isinstance(b, int):
                        continue
                    if dirs.get(p) == "output":
                        if b not in arrival:
                            arrival[b] = (0.0, None, cname, f"{ctype} {cname} .{p}[{i}]{net(b)}")
                    else:
                        ends.append((b, f"{ctype} {cname} .{p}[{i}]" + (f" (register {reg})" if reg else "")))
            continue
        comb[cname] = (ctype, kind, dirs)
        # a LUT RAM's outputs depend on its read addresses only (data and enable are written at the edge)
        feeds = {a for a, _ in lutram_read_pairs(ctype, conns)} if kind == "lutram" else None
        for p, bits in conns.items():
            for b in bits:
                if not isinstance(b, int):
                    continue
                if dirs.get(p) == "output":
                    driver[b] = cname
                elif feeds is None or p in feeds:
                    readers.setdefault(b, []).append(cname)
        if kind == "lutram":
            # the write side of a LUT RAM / SRL is an end point; a read-only address is not
            reads = {a for a, _ in lutram_read_pairs(ctype, conns)}
            for p, bits in conns.items():
                if dirs.get(p) != "output" and p not in {"WCLK", "CLK"} and lutram_writes(ctype, p, conns):
                    for i, b in enumerate(bits):
                        if isinstance(b, int):
                            ends.append((b, f"{ctype} {cname} .{p}[{i}]" + (" (write address)" if p in reads else "")))

    # Kahn's order over the combinational cells: a cell is ready when every input bit driven by
    # another combinational cell has its arrival
    pending = {}
    for cname, (ctype, kind, dirs) in comb.items():
        conns = cells[cname]["connections"]
        feeds = {a for a, _ in lutram_read_pairs(ctype, conns)} if kind == "lutram" else None
        ins = {b for p, bits in conns.items() if dirs.get(p) != "output" and (feeds is None or p in feeds)
               for b in bits if isinstance(b, int) and b in driver}
        pending[cname] = len(ins)
    queue = deque(c for c, n in pending.items() if n == 0)
    done = 0
    loop_cells = []

    def arr_of(b):
        """Arrival of a net bit; an undriven bit starts a path."""
        if not isinstance(b, int):
            return None
        a = arrival.get(b)
        if a is None and b not in driver and not reg_only:
            a = arrival[b] = (0.0, None, None, f"undriven net bit {b}")
        return a

    def evaluate(cname):
        ctype, kind, dirs = comb[cname]
        conns = cells[cname]["connections"]
        outs = [(p, i, b) for p, bits in conns.items() if dirs.get(p) == "output"
                for i, b in enumerate(bits) if isinstance(b, int)]
        # best (levels, from bit) over the inputs that reach each output, with the weights above
        if kind in ("lut", "muxf", "carry"):
            best = (None, None)
            best_ci = (None, None)
            best_in = (None, None)
            for p, bits in conns.items():
                if dirs.get(p) == "output":
                    continue
                for b in bits:
                    a = arr_of(b)
                    if a is None:
                        continue
                    if kind == "carry" and p == "CIN":  # from the bit below, same cell: no level
                        if best_in[0] is None or a[0] > best_in[0]:
                            best_in = (a[0], b)
                    elif kind == "carry" and p == "CI":
                        if best_ci[0] is None or a[0] > best_ci[0]:
                            best_ci = (a[0], b)
                    elif best[0] is None or a[0] > best[0]:
                        best = (a[0], b)
            if kind == "lut":
                w = weights["lut"]
            elif kind == "muxf":
                w = weights["muxf"]
            else:
                w = weights["carry"]
            cand = []
            if best[0] is not None:
                cand.append((best[0] + w, best[1]))
            if best_ci[0] is not None:
                cand.append((best_ci[0] + weights["carry_step"] * CARRY_TYPES[ctype] / 4, best_ci[1]))
            if best_in[0] is not None:
                cand.append((best_in[0], best_in[1]))
            if not cand and reg_only:
                return  # fed by ports and constants only: no register-to-register path here
            lv, src = max(cand) if cand else (w, None)
            for p, i, b in outs:
                arrival[b] = (lv, src, cname, None if src is not None else f"{ctype} {cname} (constant inputs)")
        else:  # LUT RAM / SRL read
            pairs = lutram_read_pairs(ctype, conns)
            w = weights["lutram"]
            for p, i, b in outs:
                best = (0.0, None)
                for ap, op in pairs:
                    if op != p:
                        continue
                    for ab in conns.get(ap, []):
                        a = arr_of(ab)
                        if a is not None and (best[1] is None or a[0] > best[0]):
                            best = (a[0], ab)
                if any(op == p for _, op in pairs):
                    lv = best[0] + w
                    label = None if best[1] is not None else f"{ctype} {cname} (stored bits)"
                    arrival[b] = (lv, best[1], cname, label)
                else:  # cascade output: the last stored bit
                    arrival[b] = (0.0, None, cname, f"{ctype} {cname} .{p}[{i}]")

    while True:
        while queue:
            cname = queue.popleft()
            evaluate(cname)
            done += 1
            ctype, kind, dirs = comb[cname]
            for p, bits in cells[cname]["connections"].items():
                if dirs.get(p) != "output":
                    continue
                for b in bits:
                    if not isinstance(b, int):
                        continue
                    for r in set(readers.get(b, [])):
                        # each distinct input bit was counted once in pending
                        pending[r] -= 1
                        if pending[r] == 0:
                            queue.append(r)
        if done == len(comb):
            break
        # a combinational loop: cut it at one of its cells (its unresolved inputs count as 0)
        rest = [c for c, n in pending.items() if n > 0]
        loop_cells.append(rest[0])
        pending[rest[0]] = 0
        for p, bits in cells[rest[0]]["connections"].items():
            if comb[rest[0]][2].get(p) != "output":
                for b in bits:
                    if isinstance(b, int) and b not in arrival and b in driver:
                        arrival[b] = (0.0, None, None, f"combinational loop cut at net bit {b}")
        queue.append(rest[0])

    # the worst end point, then its path back to the start
    worst = None
    for b, label in ends:
        a = arr_of(b)
        if a is None:
            continue
        if worst is None or a[0] > worst[0]:
            worst = (a[0], b, label)
    result = {"module": mname, "levels": 0.0, "path": [], "n_lut": 0, "n_muxf": 0, "n_carry": 0,
              "n_lutram": 0, "dsp_noreg": dsp_noreg, "loops": loop_cells, "end_cells": n_end_cells}
    if worst is None:
        return result
    lv, b, end_label = worst
    path = []
    seen = set()
    while b is not None and b not in seen:
        seen.add(b)
        a = arrival[b]
        path.append((a[0], a[2], a[3], b))
        b = a[1]
    path.reverse()
    steps = []
    prev = None
    for levels, cname, label, bit in path:
        if label is not None:
            steps.append((0.0, "start", label))
        if cname is not None and cname in comb:
            ctype = comb[cname][0]
            kind = comb[cname][1]
            orig = cells[cname].get("orig", cname)
            if orig == prev:  # the next bit of the same carry cell: one step, its last bit's level
                steps[-1] = (levels, ctype, short(orig) + net(bit))
                continue
            prev = orig
            result["n_" + kind] += 1
            steps.append((levels, ctype, short(orig) + net(bit)))
    steps.append((lv, "end", end_label))
    result["levels"] = lv
    result["path"] = steps
    return result


def short(cname):
    """A cell name with Yosys's repeated generate-block prefixes (LUT mapping: .genblk1 x 20) counted."""
    return re.sub(r"((?:\.genblk1){2,})", lambda m: f".genblk1*{m.group(1).count('.genblk1')}", cname)


def read_ltp(path):
    """Yosys `ltp` output: {module: cell count of its longest topological path}."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    return {m: int(n) for m, n in re.findall(r"Longest topological path in (\S+) \(length=(\d+)\)", text)}


def fmt(x):
    """Levels with up to three decimals (the default weights are multiples of 1/8)."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


def main(argv):
    ap = argparse.ArgumentParser(
        description="Longest register-to-register path of a Yosys-mapped UltraScale+ netlist, in LUT levels.",
        epilog="Weights and the reasons for them: the module docstring and docs/rtl-synthesis.md.")
    ap.add_argument("netlist", help="Yosys write_json output after synth_xilinx")
    ap.add_argument("--module", help="measure only this module (default: every module that is not a black box)")
    ap.add_argument("--ltp", help="Yosys ltp output for the same netlist, printed beside the figure")
    ap.add_argument("--tsv", help="also write one tab-separated line per module to this file")
    ap.add_argument("--muxf-weight", type=float, default=0.25, help="levels per MUXF7/F8/F9 (default 0.25)")
    ap.add_argument("--carry-weight", type=float, default=0.5,
                    help="levels for entering a carry chain from S/DI/CYINIT (default 0.5)")
    ap.add_argument("--carry-step", type=float, default=0.125,
                    help="levels per further CARRY4 along a chain, CI to CO (default 0.125; CARRY8 twice)")
    ap.add_argument("--lutram-weight", type=float, default=1.0, help="levels for a LUT RAM / SRL read (default 1)")
    args = ap.parse_args(argv)
    weights = {"lut": 1.0, "muxf": args.muxf_weight, "carry": args.carry_weight,
               "carry_step": args.carry_step, "lutram": args.lutram_weight}
    for k, v in weights.items():
        if v < 0:
            die(f"weights must not be negative ({k} = {v})", 2)

    try:
        with open(args.netlist, encoding="utf-8") as f:
            design = json.load(f)
    except OSError as e:
        die(f"cannot read {args.netlist}: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        die(f"{args.netlist} is not JSON: {e}")
    if not isinstance(design, dict) or not isinstance(design.get("modules"), dict):
        die(f"{args.netlist} is not a Yosys JSON netlist (no 'modules' object; write it with write_json)")
    mods = design["modules"]

    def is_blackbox(m):
        attrs = m.get("attributes", {}) if isinstance(m, dict) else {}
        return any(str(attrs.get(k, "0")).strip("0") not in ("",) for k in ("blackbox", "whitebox"))

    if args.module:
        if args.module not in mods:
            names = ", ".join(sorted(n for n, m in mods.items() if not is_blackbox(m))[:10])
            die(f"module {args.module} is not in {args.netlist} (modules there: {names or 'none'})")
        names = [args.module]
    else:
        names = sorted(n for n, m in mods.items() if not is_blackbox(m))
        if not names:
            die(f"{args.netlist} has no module that is not a black box")
    try:
        ltp = read_ltp(args.ltp) if args.ltp else {}
        results = [(measure(n, mods[n], weights), measure(n, mods[n], weights, reg_only=True)) for n in names]
    except InputError as e:
        die(str(e))

    lines = []
    for r, rr in results:
        n_ltp = ltp.get(r["module"], ltp.get("\\" + r["module"]))
        cells_on_path = r["n_lut"] + r["n_muxf"] + r["n_carry"] + r["n_lutram"]
        print(f"{r['module']}: {fmt(r['levels'])} LUT levels: {r['n_lut']} LUT, {r['n_muxf']} MUXF7/8/9, "
              f"{r['n_carry']} CARRY, {r['n_lutram']} LUT RAM read on the path"
              + (f"; yosys ltp: {n_ltp} cells" if n_ltp is not None else "")
              + f"; register to register: {fmt(rr['levels'])}")
        if r["dsp_noreg"]:
            print(f"  note: {r['dsp_noreg']} DSP48E2 without internal registers (combinational, "
                  "counted as end points: paths through them are longer than shown)")
        if r["loops"]:
            print(f"  warning: {len(r['loops'])} combinational loop(s), cut at {', '.join(r['loops'][:3])}")
        for levels, what, name in r["path"]:
            print(f"  {fmt(levels):>6}  {what:<7} {name}")
        if rr["levels"] < r["levels"] and rr["path"]:
            print(f"  the longest path from a register to a register: {fmt(rr['levels'])} LUT levels: "
                  f"{rr['n_lut']} LUT, {rr['n_muxf']} MUXF7/8/9, {rr['n_carry']} CARRY, {rr['n_lutram']} LUT RAM read")
            for levels, what, name in rr["path"]:
                print(f"  {fmt(levels):>6}  {what:<7} {name}")
        lines.append("\t".join([r["module"], fmt(r["levels"]), str(r["n_lut"]), str(r["n_muxf"]),
                                str(r["n_carry"]), str(r["n_lutram"]), str(cells_on_path),
                                "-" if n_ltp is None else str(n_ltp), str(r["dsp_noreg"]), fmt(rr["levels"])]))
    if args.tsv:
        try:
            with open(args.tsv, "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
        except OSError as e:
            die(f"cannot write {args.tsv}: {e.strerror}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # the reader stopped (| head): not an error of ours
        sys.stderr.close()
        sys.exit(0)
