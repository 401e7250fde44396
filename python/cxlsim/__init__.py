"""cxlsim: Python bindings (ctypes) over libcxlsim's C API (include/cxlsim/cxlsim.h).

Every result is a dict; every error raises CxlsimError with the C API's code, message and location.

    import cxlsim
    dev = cxlsim.Device("asic", sets={"link.width": 16})
    print(dev.info()["requesters"], dev.probe(quick=True)["idle_read_latency_ns"])
    cl = cxlsim.Cluster("dgx-h100", "h100-sxm")
    print(cl.collective("allreduce", bytes=1 << 30, ranks=8)["time_ps"])

The library is found from $CXLSIM_LIBRARY, then beside this package in an installed tree
(PREFIX/share/cxlsim/python -> PREFIX/lib*/libcxlsim.so.2), then by the system's loader.
"""
import ctypes as C
import ctypes.util
import glob
import os

__all__ = ["CxlsimError", "Device", "Backend", "Experiment", "Cluster", "Memory", "api_version", "version",
           "device_presets", "backend_available"]

API_MAJOR = 2  # every struct begins with its size (cxlsim.h, "Sized structs")
API_MINOR = 0


def _find_library():
    env = os.environ.get("CXLSIM_LIBRARY")
    if env:
        return env
    prefix = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    for pattern in ("lib*/libcxlsim.so.%d" % API_MAJOR, "lib*/*/libcxlsim.so.%d" % API_MAJOR):
        found = sorted(glob.glob(os.path.join(prefix, pattern)))
        if found:
            return found[0]
    name = ctypes.util.find_library("cxlsim")
    if not name:
        raise OSError("libcxlsim not found: set CXLSIM_LIBRARY to the path of libcxlsim.so")
    return name


_lib = C.CDLL(_find_library())


class _Sized(C.Structure):
    """A public struct of cxlsim.h: its first field, size, is set to this layout's sizeof on construction (as
    the C init functions do); positional arguments fill the fields after it."""

    def __init__(self, *args, **kw):
        super().__init__(C.sizeof(type(self)), *args, **kw)


def _sized_array(cls, n):
    """n structs of cls, each with its size set (ctypes arrays do not call __init__)."""
    arr = (cls * n)()
    for x in arr:
        x.size = C.sizeof(cls)
    return arr


class _Error(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("code", C.c_int), ("line", C.c_int), ("column", C.c_int), ("file", C.c_char * 512),
                ("message", C.c_char * 1024)]


class _DeviceInfo(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("name", C.c_char * 64), ("description", C.c_char * 256), ("source", C.c_char * 512),
                ("local", C.c_int), ("clk_khz", C.c_uint32), ("hosts", C.c_uint32), ("devices", C.c_uint32),
                ("requesters", C.c_uint32), ("tags", C.c_uint32), ("channels", C.c_uint32)]


class _ProbeOptions(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("backend", C.c_char_p), ("reference", C.c_char_p), ("quick", C.c_int), ("seed", C.c_uint32),
                ("mixes", C.c_char_p), ("backend_options", C.POINTER(C.c_char_p)), ("nbackend_options", C.c_size_t)]


class _ProbePoint(C.Structure):
    _fields_ = [("offered_gbps", C.c_double), ("achieved_gbps", C.c_double), ("mean_latency_ns", C.c_double),
                ("p99_latency_ns", C.c_double)]


_MIXES, _POINTS = 16, 32


class _ProbeResult(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("idle_read_latency_ns", C.c_double), ("local_idle_read_latency_ns", C.c_double),
                ("single_stream_gbps", C.c_double), ("nmixes", C.c_uint32),
                ("mix_read", C.c_uint32 * _MIXES), ("mix_write", C.c_uint32 * _MIXES),
                ("bandwidth_gbps", C.c_double * _MIXES), ("ncurves", C.c_uint32),
                ("curve_read", C.c_uint32 * _MIXES), ("curve_write", C.c_uint32 * _MIXES),
                ("curve_saturation_gbps", C.c_double * _MIXES), ("curve_points", C.c_uint32),
                ("curve", (_ProbePoint * _POINTS) * _MIXES), ("simulated_cycles", C.c_uint64)]


class _Desc(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("id", C.c_uint64), ("base", C.c_uint64), ("bytes", C.c_uint64), ("footprint", C.c_uint64),
                ("not_before", C.c_uint64), ("stride", C.c_uint32), ("seed", C.c_uint32),
                ("gap_cycles", C.c_uint32), ("requester", C.c_uint32), ("max_outstanding", C.c_uint32),
                ("pattern", C.c_uint32), ("read_weight", C.c_uint32), ("write_weight", C.c_uint32)]


class _Completion(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("id", C.c_uint64), ("start_cycle", C.c_uint64), ("end_cycle", C.c_uint64),
                ("requester", C.c_uint32), ("lines", C.c_uint32)]


class _Stats(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("cycles", C.c_uint64), ("seconds", C.c_double), ("read_gbps", C.c_double),
                ("write_gbps", C.c_double), ("read_latency_ns", C.c_double * 4), ("write_latency_ns", C.c_double * 4),
                ("reads", C.c_uint64), ("writes", C.c_uint64), ("link_utilisation", C.c_double * 2),
                ("row_hit_rate", C.c_double), ("row_conflicts", C.c_uint64), ("refreshes", C.c_uint64),
                ("devload", C.c_double * 4)]


_BK = 6


class _TrainResult(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("iteration_s", C.c_double), ("breakdown_s", C.c_double * _BK), ("tokens_per_s", C.c_double),
                ("mfu", C.c_double), ("model_flops", C.c_double), ("events", C.c_uint64), ("flows", C.c_uint64),
                ("kernels", C.c_uint64), ("stages", C.c_uint32), ("collective_kinds", C.c_uint32),
                ("cxl_transfers", C.c_uint64), ("cxl_detailed_cycles", C.c_uint64),
                ("cxl_extrapolated_cycles", C.c_uint64), ("cxl_backend", C.c_char * 16)]


class _Collective(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("op", C.c_uint32), ("bytes", C.c_uint64), ("ranks", C.c_uint32), ("ranks_per_node", C.c_uint32),
                ("algo", C.c_uint32), ("proto", C.c_uint32), ("channels", C.c_uint32)]


class _CollectiveResult(_Sized):
    _fields_ = [("size", C.c_size_t),
                ("time_ps", C.c_int64), ("algo", C.c_uint32), ("proto", C.c_uint32), ("algbw_gbps", C.c_double),
                ("busbw_gbps", C.c_double), ("phases", C.c_uint32), ("loops", C.c_uint64)]


_P = C.c_void_p
_E = C.POINTER(_Error)
_STRS = C.POINTER(C.c_char_p)
_sig = {
    "cxlsim_api_version": (C.c_int, []),
    "cxlsim_version": (C.c_char_p, []),
    "cxlsim_device_load": (C.c_int, [C.c_char_p, _STRS, C.c_size_t, C.POINTER(_P), _E]),
    "cxlsim_device_load_string": (C.c_int, [C.c_char_p, C.c_char_p, _STRS, C.c_size_t, C.POINTER(_P), _E]),
    "cxlsim_device_free": (None, [_P]),
    "cxlsim_device_info_get": (C.c_int, [_P, C.POINTER(_DeviceInfo), _E]),
    "cxlsim_device_presets": (_STRS, []),
    "cxlsim_backend_available": (C.c_int, [C.c_char_p]),
    "cxlsim_probe": (C.c_int, [_P, C.POINTER(_ProbeOptions), C.POINTER(_ProbeResult), _E]),
    "cxlsim_backend_open": (C.c_int, [_P, C.c_char_p, C.POINTER(_P), _E]),
    "cxlsim_backend_open_opts": (C.c_int, [_P, C.c_char_p, _STRS, C.c_size_t, C.POINTER(_P), _E]),
    "cxlsim_backend_close": (None, [_P]),
    "cxlsim_backend_submit": (C.c_int, [_P, C.POINTER(_Desc), C.c_size_t, _E]),
    "cxlsim_backend_space": (C.c_uint32, [_P, C.c_uint32]),
    "cxlsim_backend_advance": (C.c_int, [_P, C.c_uint64, C.c_int, _E]),
    "cxlsim_backend_now": (C.c_uint64, [_P]),
    "cxlsim_backend_poll": (C.c_size_t, [_P, C.POINTER(_Completion), C.c_size_t]),
    "cxlsim_backend_idle": (C.c_int, [_P]),
    "cxlsim_backend_stats": (C.c_int, [_P, C.POINTER(_Stats), _E]),
    "cxlsim_experiment_load": (C.c_int, [C.c_char_p, _STRS, C.c_size_t, C.POINTER(_P), _E]),
    "cxlsim_experiment_load_string": (C.c_int, [C.c_char_p, C.c_char_p, _STRS, C.c_size_t, C.POINTER(_P), _E]),
    "cxlsim_experiment_free": (None, [_P]),
    "cxlsim_train": (C.c_int, [_P, C.c_char_p, C.POINTER(_TrainResult), _E]),
    "cxlsim_breakdown_name": (C.c_char_p, [C.c_int]),
    "cxlsim_cluster_load": (C.c_int, [C.c_char_p, C.c_char_p, C.POINTER(_P), _E]),
    "cxlsim_cluster_from_experiment": (C.c_int, [_P, C.POINTER(_P), _E]),
    "cxlsim_cluster_free": (None, [_P]),
    "cxlsim_cluster_shape": (C.c_int, [_P, C.POINTER(C.c_uint32), C.POINTER(C.c_uint32)]),
    "cxlsim_collective_time": (C.c_int, [_P, C.POINTER(_Collective), C.POINTER(_CollectiveResult), _E]),
    "cxlsim_memory_open": (C.c_int, [_P, C.c_char_p, C.c_uint32, C.c_int, C.POINTER(_P), _E]),
    "cxlsim_memory_close": (None, [_P]),
    "cxlsim_memory_start": (C.c_int, [_P, C.c_int64, C.c_uint32, C.c_uint32, C.c_uint64, C.c_uint32, C.c_uint32,
                                      C.c_double, C.c_uint32, _E]),
    "cxlsim_memory_next": (C.c_int, [_P, C.c_int64, C.POINTER(C.c_int64), C.POINTER(C.c_uint32), _E]),
    "cxlsim_memory_transfer": (C.c_int, [_P, C.c_int64, C.c_uint32, C.c_uint32, C.c_uint64, C.c_uint32, C.c_uint32,
                                         C.POINTER(C.c_int64), _E]),
}
for _name, (_res, _args) in _sig.items():
    _f = getattr(_lib, _name)
    _f.restype, _f.argtypes = _res, _args

if _lib.cxlsim_api_version() // 10000 != API_MAJOR or _lib.cxlsim_api_version() % 10000 // 100 < API_MINOR:
    raise ImportError("libcxlsim API %d; these bindings need major %d, minor at least %d"
                      % (_lib.cxlsim_api_version(), API_MAJOR, API_MINOR))


class CxlsimError(Exception):
    """An error of the C API: code (CXLSIM_E*, negative), message, file, line and column (0 when none)."""

    def __init__(self, err):
        self.code = err.code
        self.message = err.message.decode("utf-8", "replace")
        self.file = err.file.decode("utf-8", "replace")
        self.line, self.column = err.line, err.column
        where = "%s:%d:%d: " % (self.file, self.line, self.column) if self.file and self.line else \
            ("%s: " % self.file if self.file else "")
        super().__init__(where + self.message)


def _call(fn, *args):
    err = _Error()
    rc = fn(*args, C.byref(err))
    if rc < 0:
        raise CxlsimError(err)
    return rc


def _b(s):
    return None if s is None else s.encode()


def _sets(sets):
    """{"link.width": 8} or ["link.width=8"] -> (char **, n)."""
    if not sets:
        return None, 0
    items = ["%s=%s" % (k, v) for k, v in sets.items()] if isinstance(sets, dict) else list(sets)
    arr = (C.c_char_p * len(items))(*[i.encode() for i in items])
    return arr, len(items)


def _dict(st):
    """A ctypes struct as a dict: arrays become lists, char arrays strings."""
    out = {}
    for name, _ in st._fields_:
        if name != "size":
            out[name] = _value(getattr(st, name))
    return out


def _value(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, C.Structure):
        return _dict(v)
    if isinstance(v, C.Array):
        return [_value(x) for x in v]
    return v


def api_version():
    return _lib.cxlsim_api_version()


def version():
    return _lib.cxlsim_version().decode()


def device_presets():
    p = _lib.cxlsim_device_presets()
    out, i = [], 0
    while p[i]:
        out.append(p[i].decode())
        i += 1
    return out


def backend_available(name):
    """True when the library has backend `name`: csim and analytical always; verilator and xrt where their
    modules are installed beside the library (docs/library.md, "Backends")."""
    return bool(_lib.cxlsim_backend_available(_b(name)))


class _Handle:
    _free = None

    def close(self):
        if getattr(self, "_h", None):
            type(self)._free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Device(_Handle):
    """A device description: Device("asic"), Device("my.yaml", sets={...}) or Device(yaml="extends: asic ...")."""
    _free = _lib.cxlsim_device_free

    def __init__(self, path_or_preset=None, sets=None, yaml=None, name=None):
        h = _P()
        arr, n = _sets(sets)
        if yaml is not None:
            _call(_lib.cxlsim_device_load_string, _b(yaml), _b(name), arr, n, C.byref(h))
        else:
            _call(_lib.cxlsim_device_load, _b(path_or_preset or "asic"), arr, n, C.byref(h))
        self._h = h

    def info(self):
        i = _DeviceInfo()
        _call(_lib.cxlsim_device_info_get, self._h, C.byref(i))
        d = _dict(i)
        d["local"] = bool(d["local"])
        return d

    def probe(self, backend=None, reference=None, quick=False, seed=1, mixes=None, options=None):
        """options: the backend's, as Backend's ({"xclbin": FILE, "card": "0"} for xrt)."""
        arr, n = _sets(options)
        o = _ProbeOptions(_b(backend), _b(reference), int(quick), seed, _b(mixes), arr, n)
        r = _ProbeResult()
        _call(_lib.cxlsim_probe, self._h, C.byref(o), C.byref(r))
        d = {k: _value(getattr(r, k)) for k in ("idle_read_latency_ns", "local_idle_read_latency_ns",
                                                "single_stream_gbps", "simulated_cycles")}
        d["bandwidth"] = [{"read": r.mix_read[i], "write": r.mix_write[i], "gbps": r.bandwidth_gbps[i]}
                          for i in range(r.nmixes)]
        d["curves"] = [{"read": r.curve_read[i], "write": r.curve_write[i],
                        "saturation_gbps": r.curve_saturation_gbps[i],
                        "points": [_dict(r.curve[i][k]) for k in range(r.curve_points)]} for i in range(r.ncurves)]
        return d

    def backend(self, name=None, options=None):
        return Backend(self, name, options)

    def memory(self, backend=None, domains=1, exact=False):
        return Memory(self, backend, domains, exact)


PATTERNS = {"seq": 0, "random": 1, "stride": 2}


class Backend(_Handle):
    """A cycle-level backend instance ("csim", "analytical"; "verilator" and "xrt" where their modules are
    installed, xrt with options {"xclbin": FILE, "card": "0", "timeout_ms": 10000}) of a device."""
    _free = _lib.cxlsim_backend_close

    def __init__(self, device, name=None, options=None):
        h = _P()
        arr, n = _sets(options)
        _call(_lib.cxlsim_backend_open_opts, device._h, _b(name), arr, n, C.byref(h))
        self._h, self._device = h, device

    def submit(self, descs):
        """descs: dicts with the fields of cxlsim_desc (id, base, bytes, requester, read_weight, ...;
        pattern "seq", "random" or "stride")."""
        arr = _sized_array(_Desc, len(descs))
        for i, d in enumerate(descs):
            for k, v in d.items():
                setattr(arr[i], k, PATTERNS[v] if k == "pattern" and isinstance(v, str) else v)
        _call(_lib.cxlsim_backend_submit, self._h, arr, len(descs))

    def space(self, requester):
        return _lib.cxlsim_backend_space(self._h, requester)

    def advance(self, until, stop_on_completion=False):
        _call(_lib.cxlsim_backend_advance, self._h, until, int(stop_on_completion))

    def now(self):
        return _lib.cxlsim_backend_now(self._h)

    def idle(self):
        return bool(_lib.cxlsim_backend_idle(self._h))

    def poll(self, max_completions=256):
        arr = _sized_array(_Completion, max_completions)
        n = _lib.cxlsim_backend_poll(self._h, arr, max_completions)
        return [_dict(arr[i]) for i in range(n)]

    def stats(self):
        s = _Stats()
        _call(_lib.cxlsim_backend_stats, self._h, C.byref(s))
        return _dict(s)

    def run(self, step=10000):
        """Advance until nothing is queued or in flight; return every completion."""
        out = []
        while not self.idle():
            self.advance(self.now() + step)
            out += self.poll()
        return out + self.poll()


BREAKDOWN = [_lib.cxlsim_breakdown_name(i).decode() for i in range(_BK)]


class Experiment(_Handle):
    """An experiment: Experiment("llama2-7b-2x8-h100", sets={"training.tp": 4}) or Experiment(yaml=..., sets=...)."""
    _free = _lib.cxlsim_experiment_free

    def __init__(self, path_or_preset=None, sets=None, yaml=None, name=None):
        h = _P()
        arr, n = _sets(sets)
        if yaml is not None:
            _call(_lib.cxlsim_experiment_load_string, _b(yaml), _b(name), arr, n, C.byref(h))
        else:
            _call(_lib.cxlsim_experiment_load, _b(path_or_preset or "llama2-7b-2x8-h100"), arr, n, C.byref(h))
        self._h = h

    def train(self, backend=None):
        r = _TrainResult()
        _call(_lib.cxlsim_train, self._h, _b(backend), C.byref(r))
        d = _dict(r)
        d["breakdown_s"] = dict(zip(BREAKDOWN, d["breakdown_s"]))
        return d

    def cluster(self):
        return Cluster(experiment=self)


OPS = {"allreduce": 0, "reducescatter": 1, "allgather": 2, "broadcast": 3, "alltoall": 4}
ALGOS = {"ring": 0, "tree": 1, "hierarchical": 2, "auto": 3}
PROTOS = {"LL": 0, "LL128": 1, "Simple": 2, "auto": 3}


class Cluster(_Handle):
    """A cluster and its GPU: Cluster("dgx-h100", "h100-sxm"), or an experiment's (experiment=...)."""
    _free = _lib.cxlsim_cluster_free

    def __init__(self, cluster=None, gpu=None, experiment=None):
        h = _P()
        if experiment is not None:
            _call(_lib.cxlsim_cluster_from_experiment, experiment._h, C.byref(h))
        else:
            _call(_lib.cxlsim_cluster_load, _b(cluster), _b(gpu), C.byref(h))
        self._h = h

    def shape(self):
        """(GPUs per node, nodes)."""
        g, n = C.c_uint32(), C.c_uint32()
        _lib.cxlsim_cluster_shape(self._h, C.byref(g), C.byref(n))
        return g.value, n.value

    def collective(self, op="allreduce", bytes=0, ranks=1, ranks_per_node=0, algo="auto", proto="auto", channels=0):
        q = _Collective(OPS[op], bytes, ranks, ranks_per_node, ALGOS[algo], PROTOS[proto], channels)
        r = _CollectiveResult()
        _call(_lib.cxlsim_collective_time, self._h, C.byref(q), C.byref(r))
        d = _dict(r)
        d["algo"] = [k for k, v in ALGOS.items() if v == r.algo][0]
        d["proto"] = [k for k, v in PROTOS.items() if v == r.proto][0]
        return d


class Memory(_Handle):
    """CXL domains of a device driven by transfers (the training engine's CXL memory)."""
    _free = _lib.cxlsim_memory_close

    def __init__(self, device, backend=None, domains=1, exact=False):
        h = _P()
        _call(_lib.cxlsim_memory_open, device._h, _b(backend), domains, int(exact), C.byref(h))
        self._h, self._device = h, device

    def start(self, bytes, read=1, write=0, at_ps=0, domain=0, host=0, cap_gbps=0.0, tag=0):
        _call(_lib.cxlsim_memory_start, self._h, at_ps, domain, host, bytes, read, write, cap_gbps, tag)

    def next(self, horizon_ps=2**63 - 1):
        """The next completion before horizon_ps as {"time_ps", "tag"}, or None."""
        t, tag = C.c_int64(), C.c_uint32()
        got = _call(_lib.cxlsim_memory_next, self._h, horizon_ps, C.byref(t), C.byref(tag))
        return {"time_ps": t.value, "tag": tag.value} if got == 1 else None

    def transfer(self, bytes, read=1, write=0, at_ps=0, domain=0, host=0):
        """Start one transfer and run to its completion; its duration in picoseconds."""
        d = C.c_int64()
        _call(_lib.cxlsim_memory_transfer, self._h, at_ps, domain, host, bytes, read, write, C.byref(d))
        return d.value
