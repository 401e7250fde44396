#!/usr/bin/env python3
"""Time cxlsim's operations on a real GPU, for the measured-times model (host/train/optimes.h).

    python3 scripts/profile_ops.py OPS.yaml -o TIMES.yaml [--warmup 5] [--iters 20] [--device cuda:0]

OPS.yaml is a list of operations in the format of docs/training-config.md, "Measured operation times"
(`cxlsim ops` writes one; entries without `time`). TIMES.yaml is the same list with `time: <N>ns` on
every entry that could be timed, and `gpu:` from torch.cuda.get_device_name. Entries that cannot be
timed here (fp8 without support, for example) are left out with a warning; cxlsim prices those with
its efficiency curves.

How each entry is timed (mean over --iters calls after --warmup, one pair of CUDA events around the
loop, so the per-call launch gap is included as it is in training):

* GEMM (`kind: gemm`, or, without `kind`, any entry with n > 1 or k > 1): torch.matmul of an m x k by a
  k x n matrix, torch.bmm when batch > 1. bf16 and fp16 directly; tf32 as fp32 with
  torch.backends.cuda.matmul.allow_tf32 = True; fp32 with it False; fp8 through torch._scaled_mm (e4m3,
  batch 1 only) when this torch and GPU support it, else skipped.
* Memory-bound op (`kind: mem`, m = elements), chosen by the start of a dot-separated part of the
  name (first match, in this order; cxlsim's names are in host/train/opgraph.c): adam (torch.optim.Adam
  step, fused when available, over m fp32 parameters), rmsnorm/rms, layernorm/ln/norm (ln1, lnf:
  layer_norm), softmax, xent/cross_entropy/loss, swiglu (silu(a) * b, m output elements), silu, gelu,
  dropout (p = 0.1), embed (gather of m elements from a 32000-row table), resid/add/bias (x + y). Rows
  for the normalisations, softmax and cross-entropy: the list carries no row length, so rows are 4096
  elements (a typical hidden size) when that divides m, else the largest power of two up to 8192 that
  does (cross-entropy prefers a 32000-entry vocabulary). A name with a part starting with "bwd" is
  timed as the backward kernel of that op (torch.autograd.grad of its output). fp8 memory-bound ops
  are timed in bf16 (an upper bound), with a warning.
* Fused attention (`kind: attn_fwd` / `attn_bwd`: batch = micro-batch x heads, m queries, n keys, k head
  dimension): torch.nn.functional.scaled_dot_product_attention with is_causal=True on bf16/fp16 (fp8 in
  bf16, as Transformer Engine runs it), one head per batch entry (GQA's shared K and V are not
  reproduced); attn_bwd times torch.autograd.grad of its output for Q, K and V (the forward excluded).
* Anything else: a device-to-device copy moving the entry's `bytes` (read + written), or 2 x m
  elements of the dtype when `bytes` is absent.

Data is random and caches are not flushed between calls: small ops may be served from L2, as a
producer's output often is in training.

Requires PyTorch with CUDA and PyYAML; without them it says so and exits 2.
Not run in CI (no GPU there); verified only by `python3 -m py_compile` (tests/cli/profile_script.sh).
"""

import argparse
import json
import re
import sys

DTYPES = ("bf16", "fp16", "fp8", "tf32", "fp32")


def die(msg, code=2):
    print(f"profile_ops.py: {msg}", file=sys.stderr)
    sys.exit(code)


def warn(msg):
    print(f"profile_ops.py: warning: {msg}", file=sys.stderr)


def row_len(m, prefer=(4096,)):
    """A row length that divides m: a preferred one, else the largest power of two up to 8192."""
    for r in prefer:
        if m % r == 0:
            return r
    r = 8192
    while r > 1 and m % r:
        r //= 2
    return r


class Profiler:
    def __init__(self, torch, device, warmup, iters):
        self.torch = torch
        self.device = device
        self.warmup = warmup
        self.iters = iters

    # ---- helpers ----

    def dtype(self, name):
        t = self.torch
        return {"bf16": t.bfloat16, "fp16": t.float16, "tf32": t.float32, "fp32": t.float32}[name]

    def rand(self, shape, dtype, grad=False):
        return self.torch.randn(shape, device=self.device, dtype=dtype, requires_grad=grad)

    def time_ns(self, fn):
        """Mean time of one fn() call in ns, measured with CUDA events."""
        t = self.torch
        for _ in range(self.warmup):
            fn()
        start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        t.cuda.synchronize(self.device)
        start.record()
        for _ in range(self.iters):
            fn()
        end.record()
        t.cuda.synchronize(self.device)
        return max(1, round(start.elapsed_time(end) * 1e6 / self.iters))

    # ---- GEMMs ----

    def gemm(self, e):
        t, dt = self.torch, e["dtype"]
        b, m, n, k = e["batch"], e["m"], e["n"], e["k"]
        if dt == "fp8":
            return self.gemm_fp8(e)
        t.backends.cuda.matmul.allow_tf32 = dt == "tf32"
        dtype = self.dtype(dt)
        if b == 1:
            x, y = self.rand((m, k), dtype), self.rand((k, n), dtype)
            return self.time_ns(lambda: t.matmul(x, y))
        x, y = self.rand((b, m, k), dtype), self.rand((b, k, n), dtype)
        return self.time_ns(lambda: t.bmm(x, y))

    def gemm_fp8(self, e):
        t = self.torch
        if not hasattr(t, "float8_e4m3fn") or not hasattr(t, "_scaled_mm"):
            warn(f"{e['name']}: this torch has no fp8 matrix product; skipped")
            return None
        if t.cuda.get_device_capability(self.device) < (8, 9):
            warn(f"{e['name']}: this GPU has no fp8 tensor cores; skipped")
            return None
        if e["batch"] != 1:
            warn(f"{e['name']}: batched fp8 products are not timed (torch._scaled_mm is 2-D); skipped")
            return None
        m, n, k = e["m"], e["n"], e["k"]
        x = self.rand((m, k), t.float16).to(t.float8_e4m3fn)
        y = self.rand((n, k), t.float16).to(t.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        one = t.tensor(1.0, device=self.device)
        try:
            fn = lambda: t._scaled_mm(x, y, scale_a=one, scale_b=one, out_dtype=t.bfloat16)
            fn()
        except (RuntimeError, TypeError) as err:
            warn(f"{e['name']}: torch._scaled_mm failed ({err}); skipped")
            return None
        return self.time_ns(fn)

    # ---- fused attention ----

    def attn(self, e):
        t, F = self.torch, self.torch.nn.functional
        if not hasattr(F, "scaled_dot_product_attention"):
            warn(f"{e['name']}: this torch has no scaled_dot_product_attention; skipped")
            return None
        dtype = self.dtype("bf16" if e["dtype"] in ("fp8", "tf32", "fp32") else e["dtype"])
        b, m, n, k = e["batch"], e["m"], e["n"], e["k"]
        q = self.rand((1, b, m, k), dtype).requires_grad_(e["kind"] == "attn_bwd")
        kk = self.rand((1, b, n, k), dtype).requires_grad_(e["kind"] == "attn_bwd")
        v = self.rand((1, b, n, k), dtype).requires_grad_(e["kind"] == "attn_bwd")
        if e["kind"] == "attn_fwd":
            return self.time_ns(lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True))
        o = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
        do = t.randn_like(o)
        return self.time_ns(lambda: t.autograd.grad(o, (q, kk, v), do, retain_graph=True))

    # ---- memory-bound ops ----

    def mem(self, e):
        t, F = self.torch, self.torch.nn.functional
        m = e["m"]
        parts = re.split(r"[.\s]+", e["name"].lower())
        if e["dtype"] == "fp8":
            warn(f"{e['name']}: fp8 memory-bound ops are timed in bf16 (an upper bound)")
        dtype = self.dtype("bf16" if e["dtype"] == "fp8" else e["dtype"])
        bwd = any(p.startswith(("bwd", "backward")) for p in parts)

        def has(*words):
            return any(p.startswith(words) for p in parts)

        if has("adam"):
            return self.adam(m)
        if has("rmsnorm", "rms", "layernorm", "layer_norm", "ln", "norm"):
            r = row_len(m)
            x, w = self.rand((m // r, r), dtype, bwd), self.rand((r,), dtype, bwd)
            if has("rmsnorm", "rms"):
                op = (lambda: F.rms_norm(x, (r,), w)) if hasattr(F, "rms_norm") else \
                     (lambda: x * t.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(dtype) * w)
            else:
                op = lambda: F.layer_norm(x, (r,), w)
            return self.run(op, (x, w), bwd)
        if has("softmax"):
            r = row_len(m)
            x = self.rand((m // r, r), dtype, bwd)
            return self.run(lambda: F.softmax(x, dim=-1), (x,), bwd)
        if has("xent", "cross_entropy", "crossentropy", "loss"):
            r = row_len(m, prefer=(32000, 4096))
            x = self.rand((m // r, r), dtype, bwd)
            target = t.randint(0, r, (m // r,), device=self.device)
            return self.run(lambda: F.cross_entropy(x, target), (x,), bwd)
        if has("swiglu"):
            a, b = self.rand((m,), dtype, bwd), self.rand((m,), dtype, bwd)
            return self.run(lambda: F.silu(a) * b, (a, b), bwd)
        if has("silu"):
            x = self.rand((m,), dtype, bwd)
            return self.run(lambda: F.silu(x), (x,), bwd)
        if has("gelu"):
            x = self.rand((m,), dtype, bwd)
            return self.run(lambda: F.gelu(x), (x,), bwd)
        if has("dropout"):
            x = self.rand((m,), dtype, bwd)
            return self.run(lambda: F.dropout(x, p=0.1, training=True), (x,), bwd)
        if has("embed"):
            r = row_len(m)
            table = self.rand((32000, r), dtype, bwd)
            idx = t.randint(0, 32000, (m // r,), device=self.device)
            return self.run(lambda: F.embedding(idx, table), (table,), bwd)
        if has("resid", "add", "bias"):
            x, y = self.rand((m,), dtype, bwd), self.rand((m,), dtype, bwd)
            return self.run(lambda: x + y, (x, y), bwd)
        return self.copy(e, dtype)

    def run(self, op, inputs, bwd):
        """Time op() itself, or, for a backward entry, the gradient of its output."""
        if not bwd:
            with self.torch.no_grad():
                return self.time_ns(op)
        out = op()
        grad = self.torch.ones_like(out)
        return self.time_ns(lambda: self.torch.autograd.grad(out, inputs, grad, retain_graph=True))

    def adam(self, m):
        t = self.torch
        p = t.zeros(m, device=self.device, dtype=t.float32, requires_grad=True)
        p.grad = t.randn_like(p)
        try:
            opt = t.optim.Adam([p], lr=1e-4, fused=True)
        except (TypeError, RuntimeError):
            opt = t.optim.Adam([p], lr=1e-4, foreach=True)
        return self.time_ns(opt.step)

    def copy(self, e, dtype):
        """Unknown name: a copy moving `bytes` (half read, half written)."""
        t = self.torch
        if e.get("bytes"):
            elems = max(1, int(e["bytes"]) // 2)
            src = t.empty(elems, device=self.device, dtype=t.uint8)
        else:
            src = self.rand((e["m"],), dtype)
        dst = t.empty_like(src)
        warn(f"{e['name']}: no kernel known by this name; timed as a copy of {src.numel() * src.element_size()} B")
        return self.time_ns(lambda: dst.copy_(src))


# ---- the list ----

def parse_size(v):
    """`bytes` as cxlsim writes it ("33554432B"), or a plain integer."""
    s = str(v).strip()
    return int(s[:-1]) if s.endswith("B") and s[:-1].isdigit() else int(s)


def read_list(path, yaml):
    with open(path) as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("ops"), list):
        die(f"{path}: expected a mapping with an 'ops' sequence (docs/training-config.md)")
    ops = []
    for i, e in enumerate(doc["ops"]):
        if not isinstance(e, dict) or "name" not in e or e.get("dtype") not in DTYPES or "m" not in e:
            die(f"{path}: ops[{i}] needs name, dtype (one of {', '.join(DTYPES)}) and m")
        e = dict(e)
        for key in ("batch", "n", "k"):
            e[key] = int(e.get(key, 1))
        e["m"] = int(e["m"])
        if "bytes" in e:
            e["bytes"] = parse_size(e["bytes"])
        if "kind" not in e:
            e["kind"] = "gemm" if e["n"] > 1 or e["k"] > 1 else "mem"
        ops.append(e)
    return ops


def write_times(path, gpu, source, ops, times):
    def q(s):
        return json.dumps(str(s))  # a JSON string is a YAML double-quoted scalar

    with open(path, "w") as f:
        f.write(f"# written by scripts/profile_ops.py on {gpu}\n")
        f.write(f"gpu: {q(gpu)}\nsource: {q(source)}\n")
        timed = [(e, ns) for e, ns in zip(ops, times) if ns is not None]
        f.write("ops:\n" if timed else "ops: []\n")
        for e, ns in timed:
            f.write(f"  - {{ name: {q(e['name'])}, kind: {e['kind']}, dtype: {e['dtype']}, batch: {e['batch']}, "
                    f"m: {e['m']}, n: {e['n']}, k: {e['k']}")
            if e.get("bytes"):
                f.write(f", bytes: {e['bytes']}B")
            f.write(f", time: {ns}ns }}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ops", help="list of operations (cxlsim ops output)")
    ap.add_argument("-o", "--output", required=True, help="measured times, same format with time:")
    ap.add_argument("--warmup", type=int, default=5, help="untimed calls per entry (default 5)")
    ap.add_argument("--iters", type=int, default=20, help="timed calls per entry (default 20)")
    ap.add_argument("--device", default="cuda:0", help="CUDA device (default cuda:0)")
    args = ap.parse_args()
    if args.warmup < 0 or args.iters < 1:
        die("--warmup must be >= 0 and --iters >= 1")

    try:
        import yaml
    except ImportError:
        die("PyYAML is missing (pip install pyyaml)")
    try:
        import torch
    except ImportError:
        die("PyTorch is missing; install a CUDA build of torch on a machine with an NVIDIA GPU")
    if not torch.cuda.is_available():
        die("CUDA is not available to PyTorch (no GPU, no driver, or a CPU-only torch build)")

    ops = read_list(args.ops, yaml)
    device = torch.device(args.device)
    torch.cuda.set_device(device)
    prof = Profiler(torch, device, args.warmup, args.iters)
    times = []
    for i, e in enumerate(ops):
        if e["kind"] == "gemm":
            ns = prof.gemm(e)
        elif e["kind"] in ("attn_fwd", "attn_bwd"):
            ns = prof.attn(e)
        else:
            ns = prof.mem(e)
        times.append(ns)
        shown = "skipped" if ns is None else f"{ns} ns"
        print(f"[{i + 1}/{len(ops)}] {e['name']} {e['dtype']} b{e['batch']} m{e['m']} n{e['n']} k{e['k']}: {shown}",
              file=sys.stderr)
        torch.cuda.empty_cache()
    gpu = torch.cuda.get_device_name(device)
    source = (f"scripts/profile_ops.py, torch {torch.__version__}, mean of {args.iters} calls after "
              f"{args.warmup} warm-up, CUDA events")
    write_times(args.output, gpu, source, ops, times)
    skipped = sum(ns is None for ns in times)
    print(f"wrote {args.output}: {len(ops) - skipped} timed, {skipped} skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
