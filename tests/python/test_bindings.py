"""Python bindings (python/cxlsim) over libcxlsim: every call group returns dicts, errors raise CxlsimError with
the C API's location, results are deterministic, and the sweep example runs. Run by ctest (python_bindings) with
CXLSIM_LIBRARY set to the build's libcxlsim.so; about 2 s."""
import os
import subprocess
import sys
import unittest

import cxlsim

SRC = os.environ.get("CXLSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


class Bindings(unittest.TestCase):
    def test_version(self):
        self.assertEqual(cxlsim.api_version() // 10000, cxlsim.API_MAJOR)
        self.assertIn("asic", cxlsim.device_presets())

    def test_sized_structs(self):
        """Every ctypes struct carries its size first, set to its sizeof (cxlsim.h, "Sized structs"), and the
        dicts leave it out; the library refuses a size below the first layout."""
        import ctypes
        for cls in (cxlsim._Error, cxlsim._DeviceInfo, cxlsim._ProbeOptions, cxlsim._ProbeResult, cxlsim._Desc,
                    cxlsim._Completion, cxlsim._Stats, cxlsim._TrainResult, cxlsim._Collective,
                    cxlsim._CollectiveResult):
            self.assertEqual(cls._fields_[0], ("size", ctypes.c_size_t))
            self.assertEqual(cls().size, ctypes.sizeof(cls))
        self.assertNotIn("size", cxlsim.Cluster("dgx-h100", "h100-sxm").collective("allreduce", bytes=1 << 20,
                                                                                    ranks=8))
        c = cxlsim.Cluster("dgx-h100", "h100-sxm")
        q, r = cxlsim._Collective(0, 1 << 20, 8), cxlsim._CollectiveResult()
        q.size = 4
        with self.assertRaises(cxlsim.CxlsimError) as cm:
            cxlsim._call(cxlsim._lib.cxlsim_collective_time, c._h, ctypes.byref(q), ctypes.byref(r))
        self.assertIn("cxlsim_collective.size is 4", str(cm.exception))

    def test_device_and_errors(self):
        with cxlsim.Device("asic", sets={"link.width": 16}) as d:
            info = d.info()
        self.assertEqual(info["name"], "asic")
        self.assertFalse(info["local"])
        with self.assertRaises(cxlsim.CxlsimError) as cm:
            cxlsim.Device(yaml="extends: asic\nlink:\n  widht: 8\n", name="bad.yaml")
        self.assertEqual((cm.exception.file, cm.exception.line), ("bad.yaml", 3))
        self.assertEqual(cm.exception.code, -3)
        self.assertIn("width", str(cm.exception))

    def test_backend(self):
        def read(name="csim"):
            b = cxlsim.Device("asic").backend(name)
            b.submit([{"id": 3, "bytes": 65536, "read_weight": 1, "pattern": "seq"},
                      {"id": 4, "bytes": 8192, "requester": 1, "write_weight": 1, "pattern": "random", "seed": 9}])
            return b.run(), b.stats()
        (c1, s1), (c2, _) = read(), read()
        self.assertEqual(c1, c2)
        self.assertEqual({c["id"]: c["lines"] for c in c1}, {3: 1024, 4: 128})
        self.assertGreater(s1["read_gbps"], 0)
        self.assertTrue(cxlsim.backend_available("csim"))
        if cxlsim.backend_available("verilator"):  # its module is built: the RTL gives what csim gives
            self.assertEqual(repr(read("verilator")), repr((c1, s1)))  # repr: NaN statistics compare equal
        else:
            with self.assertRaises(cxlsim.CxlsimError) as cm:
                cxlsim.Device("asic").backend("verilator")
            self.assertIn("not built into this library", cm.exception.message)
            self.assertIn("backend_verilator.so", cm.exception.message)

    def test_probe(self):
        r = cxlsim.Device("asic").probe(quick=True, mixes="1:0")
        self.assertGreater(r["idle_read_latency_ns"], r["local_idle_read_latency_ns"])
        self.assertEqual(len(r["bandwidth"]), 1)
        self.assertEqual(len(r["curves"][0]["points"]), 6)

    def test_train_and_collective(self):
        x = cxlsim.Experiment("llama2-7b-2x8-h100", sets={"training.global_batch": 64})
        r = x.train()
        self.assertAlmostEqual(sum(r["breakdown_s"].values()), r["iteration_s"], delta=1e-6 * r["iteration_s"])
        c = x.cluster().collective("allreduce", bytes=1 << 30, ranks=8, algo="ring", proto="Simple")
        self.assertEqual((c["algo"], c["proto"]), ("ring", "Simple"))
        c2 = cxlsim.Cluster("dgx-h100", "h100-sxm").collective("allreduce", bytes=1 << 30, ranks=8, algo="ring",
                                                              proto="Simple")
        self.assertEqual(c, c2)

    def test_experiment_yaml_with_sets(self):
        yaml = ("name: s\nmodel: llama2-7b\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 2 }\n"
                "training: { global_batch: 64, tp: 2 }\n")
        x = cxlsim.Experiment(yaml=yaml, name="s.yaml", sets={"cluster.nodes": 4, "training.tp": 4})
        self.assertEqual(x.cluster().shape(), (8, 4))
        with self.assertRaises(cxlsim.CxlsimError) as cm:
            cxlsim.Experiment(yaml=yaml, name="s.yaml", sets=["training.tpp=4"])
        self.assertIn("--set training.tpp", cm.exception.file)
        a2a = x.cluster().collective("alltoall", bytes=1 << 24, ranks=16, ranks_per_node=8)
        self.assertEqual(a2a["phases"], 1)

    def test_probe_backend_options(self):
        with self.assertRaises(cxlsim.CxlsimError) as cm:
            cxlsim.Device("asic").probe(quick=True, mixes="1:0", options={"xclbin": "k.xclbin"})
        self.assertIn("needs backend xrt", cm.exception.message)

    def test_memory(self):
        d = cxlsim.Device("asic")
        alone = d.memory().transfer(1 << 20)
        m = d.memory()
        m.start(16 << 20, read=0, write=1, tag=9)
        self.assertGreater(m.transfer(1 << 20), alone)
        self.assertEqual(m.next()["tag"], 9)
        self.assertIsNone(m.next())

    def test_sweep_example(self):
        out = subprocess.run([sys.executable, os.path.join(SRC, "examples", "python", "sweep_device.py"),
                              "--values", "4,8"], capture_output=True, text=True, env=os.environ)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(len(out.stdout.strip().splitlines()), 3)


if __name__ == "__main__":
    unittest.main()
