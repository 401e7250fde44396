/* cxlsim.h - the public C API of libcxlsim: CXL memory devices, the cycle-level backends, training
 * iterations and collectives of the cxlsim simulator, for use inside other programs.
 *
 * Contract.
 *  - Versioned: CXLSIM_API_VERSION (major x 10000 + minor x 100 + patch) is the version of this header;
 *    cxlsim_api_version() that of the library loaded. A program built against major M runs with any
 *    library of major M and a minor at least its own.
 *  - Sized structs: every public struct passed in or out begins with `size_t size`, the caller's
 *    sizeof, set with its init function (cxlsim_probe_options_init(&o), ...: size, and every other field
 *    0, the defaults) or CXLSIM_INIT(&s). Structs only grow at their end within a major; the library reads
 *    and writes only the fields that fit in `size` (fields beyond it take their defaults), so a program
 *    built against an older 2.x header runs on a newer library, and one built against a newer header on an
 *    older library where it uses nothing newer. A size below the struct's first released layout
 *    (CXLSIM_SIZE_MIN below) is refused with CXLSIM_EUSAGE; an err whose size is too small is not written.
 *    Arrays (cxlsim_desc, cxlsim_completion) are read and written with element 0's size as their stride.
 *    API 2.0 added the size members (a new layout, so a new major: soname libcxlsim.so.2).
 *  - Opaque handles (cxlsim_device, cxlsim_experiment, cxlsim_backend, cxlsim_cluster, cxlsim_memory):
 *    created by a *_load / *_open call, released by the matching *_free / *_close (NULL is ignored). A
 *    handle may be used by one thread at a time; different handles are independent (no global state).
 *  - Errors: every call that can fail returns CXLSIM_OK (0) or a negative CXLSIM_E* code and, when `err`
 *    is not NULL, fills it with the code, a message saying what was wrong and what would be valid, and for
 *    configuration errors the file, line and column. Nothing is printed and nothing exits.
 *  - Units are in the names: _ps picoseconds, _ns nanoseconds, _s seconds, _bytes, _gbps (10^9 bytes per
 *    second), _cycles (the device model's clock, cxlsim_device_info.clk_khz).
 *  - Determinism: the same inputs and seed give the same results, on every backend.
 *  - Backends: libcxlsim has the C model ("csim") and the analytical one ("analytical"). The RTL backend
 *    ("verilator", which needs Verilator and a C++ runtime) and the FPGA backend ("xrt", which needs XRT) are
 *    modules, <libdir>/cxlsim/backend_<name>.so, built where the build found their dependency, that the
 *    library loads when asked for them, so linking the library needs neither them nor a C++ linker. A
 *    backend the library cannot load is CXLSIM_EBACKEND, "not built into this library", with the module
 *    file it looked for and the loader's reason.
 * docs/library.md has one example per call group.
 */
#ifndef CXLSIM_CXLSIM_H
#define CXLSIM_CXLSIM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CXLSIM_BUILDING_LIBRARY) && defined(__GNUC__)
#define CXLSIM_API __attribute__((visibility("default")))
#else
#define CXLSIM_API
#endif

#define CXLSIM_API_VERSION_MAJOR 2
#define CXLSIM_API_VERSION_MINOR 0
#define CXLSIM_API_VERSION_PATCH 0
#define CXLSIM_API_VERSION \
    (CXLSIM_API_VERSION_MAJOR * 10000 + CXLSIM_API_VERSION_MINOR * 100 + CXLSIM_API_VERSION_PATCH)

/* Set *p's size to this header's sizeof *p and every other field to 0 (the defaults). */
#define CXLSIM_INIT(p) ((void)memset((p), 0, sizeof *(p)), (void)((p)->size = sizeof *(p)))
/* The smallest size the library takes for struct type T: the end of its first released fields. */
#define CXLSIM_SIZE_MIN(T, last_field) (offsetof(T, last_field) + sizeof(((T *)0)->last_field))
/* T_init(T *p): CXLSIM_INIT(p), compiled into the caller so that size is the caller's sizeof. */
#define CXLSIM_DEFINE_INIT(T) static inline void T##_init(T *p) { CXLSIM_INIT(p); }

/* ---- version and errors ---- */

enum cxlsim_status {
    CXLSIM_OK = 0,
    CXLSIM_EINTERNAL = -1, /* a bug or an impossible state */
    CXLSIM_EUSAGE = -2,    /* a bad argument (NULL handle, value out of range, unknown name) */
    CXLSIM_ECONFIG = -3,   /* a bad configuration file or value */
    CXLSIM_EBACKEND = -4,  /* backend not built into this library, or failed to open */
    CXLSIM_EIO = -5,       /* a file could not be read */
    CXLSIM_ENOMEM = -6,    /* out of memory */
    CXLSIM_ELIMIT = -7,    /* a request the model cannot serve (queue full, too many requesters, ...) */
    CXLSIM_EDEVICE = -9    /* the hardware behind a backend failed */
};

typedef struct cxlsim_error {
    size_t size;             /* sizeof, set by cxlsim_error_init() */
    int code;           /* one of CXLSIM_E*, 0 when no error */
    int line, column;   /* 1-based location in `file`; 0 when not applicable */
    char file[512];     /* configuration file, "" when not applicable */
    char message[1024]; /* what went wrong and what would be valid */
} cxlsim_error;
CXLSIM_DEFINE_INIT(cxlsim_error)

/* CXLSIM_API_VERSION of the library. */
CXLSIM_API int cxlsim_api_version(void);
/* The simulator's version, "0.1.0". */
CXLSIM_API const char *cxlsim_version(void);
/* A short name of a code: "ok", "configuration error", ... ("unknown error" for others). */
CXLSIM_API const char *cxlsim_strerror(int code);
/* "file:line:column: message" (or the message alone) into buf; returns buf. */
CXLSIM_API char *cxlsim_error_format(const cxlsim_error *err, char *buf, size_t size);

/* ---- devices (configs/devices, docs/config.md) ---- */

typedef struct cxlsim_device cxlsim_device;

typedef struct cxlsim_device_info {
    size_t size;             /* sizeof, set by cxlsim_device_info_init() */
    char name[64];
    char description[256];
    char source[512];        /* a path or "<preset NAME>" */
    int local;               /* 1: a local-DDR reference path, 0: a CXL memory path */
    uint32_t clk_khz;        /* model clock (the DRAM command clock) */
    uint32_t hosts, devices, requesters, tags;
    uint32_t channels;       /* DRAM channels per device */
} cxlsim_device_info;
CXLSIM_DEFINE_INIT(cxlsim_device_info)

/* Load a device from a file or a built-in preset name ("asic", "fpga", "local-ddr5", ...). `sets` holds
 * nsets overrides "KEY=VALUE" as the command's --set ("link.width=8"); sets may be NULL when nsets is 0. */
CXLSIM_API int cxlsim_device_load(const char *path_or_preset, const char *const *sets, size_t nsets,
                                  cxlsim_device **out, cxlsim_error *err);
/* The same from YAML text; display_name (may be NULL) names it in errors. */
CXLSIM_API int cxlsim_device_load_string(const char *yaml, const char *display_name, const char *const *sets,
                                         size_t nsets, cxlsim_device **out, cxlsim_error *err);
CXLSIM_API void cxlsim_device_free(cxlsim_device *dev);
CXLSIM_API int cxlsim_device_info_get(const cxlsim_device *dev, cxlsim_device_info *out, cxlsim_error *err);
/* Built-in device preset names, NULL-terminated. */
CXLSIM_API const char *const *cxlsim_device_presets(void);

/* ---- probe: latency and bandwidth of a device (`cxlsim probe`) ---- */

#define CXLSIM_PROBE_MAX_MIXES 16
#define CXLSIM_PROBE_MAX_POINTS 32

typedef struct cxlsim_probe_options {
    size_t size;             /* sizeof, set by cxlsim_probe_options_init() */
    const char *backend;     /* NULL: "csim" */
    const char *reference;   /* the local-DDR reference device; NULL: "local-ddr5" */
    int quick;               /* 1: the command's --quick (fewer samples, shorter windows) */
    uint32_t seed;
    const char *mixes;       /* "R:W[,R:W...]" bandwidth mixes and curves; NULL: the defaults */
    /* the fields above are the first released layout (API 1.0's): a smaller size is refused, and those
     * below default (none) for a size that ends here */
    /* API 1.1: the backend's options "KEY=VALUE" as cxlsim_backend_open_opts (xrt: "xclbin=FILE",
     * "card=N|BDF", "timeout_ms=N"; the command's --xclbin, --card, --xrt-timeout); NULL when 0 */
    const char *const *backend_options;
    size_t nbackend_options;
} cxlsim_probe_options;
CXLSIM_DEFINE_INIT(cxlsim_probe_options)

typedef struct cxlsim_probe_point {
    double offered_gbps, achieved_gbps, mean_latency_ns, p99_latency_ns; /* NaN when not measured */
} cxlsim_probe_point;

typedef struct cxlsim_probe_result {
    size_t size;             /* sizeof, set by cxlsim_probe_result_init() */
    double idle_read_latency_ns, local_idle_read_latency_ns, single_stream_gbps;
    uint32_t nmixes;                                   /* bandwidth mixes measured */
    uint32_t mix_read[CXLSIM_PROBE_MAX_MIXES], mix_write[CXLSIM_PROBE_MAX_MIXES];
    double bandwidth_gbps[CXLSIM_PROBE_MAX_MIXES];
    uint32_t ncurves;                                  /* loaded-latency curves */
    uint32_t curve_read[CXLSIM_PROBE_MAX_MIXES], curve_write[CXLSIM_PROBE_MAX_MIXES];
    double curve_saturation_gbps[CXLSIM_PROBE_MAX_MIXES];
    uint32_t curve_points;                             /* points per curve */
    cxlsim_probe_point curve[CXLSIM_PROBE_MAX_MIXES][CXLSIM_PROBE_MAX_POINTS];
    uint64_t simulated_cycles;
} cxlsim_probe_result;
CXLSIM_DEFINE_INIT(cxlsim_probe_result)

/* o may be NULL (defaults). */
CXLSIM_API int cxlsim_probe(const cxlsim_device *dev, const cxlsim_probe_options *o, cxlsim_probe_result *out,
                            cxlsim_error *err);

/* ---- backends: descriptors in, completions and statistics out (cycle-level) ---- */

typedef struct cxlsim_backend cxlsim_backend;

enum cxlsim_pattern { CXLSIM_SEQ = 0, CXLSIM_RANDOM = 1, CXLSIM_STRIDE = 2 };

/* One descriptor: `bytes` from `base` by one requester, lines of 64 B. */
typedef struct cxlsim_desc {
    size_t size;             /* sizeof, set by cxlsim_desc_init() */
    uint64_t id;              /* returned in the completion */
    uint64_t base;            /* byte address, 64 B aligned */
    uint64_t bytes;           /* a positive multiple of 64 */
    uint64_t footprint;       /* addresses wrap within [base, base + footprint); 0: bytes */
    uint64_t not_before;      /* cycle before which it does not start */
    uint32_t stride;          /* CXLSIM_STRIDE: bytes between lines (multiple of 64) */
    uint32_t seed;            /* CXLSIM_RANDOM: stream seed */
    uint32_t gap_cycles;      /* at least this many cycles between two issues (0: none) */
    uint32_t requester;       /* < cxlsim_device_info.requesters */
    uint32_t max_outstanding; /* lines in flight, 1..tags; 0: tags */
    uint32_t pattern;         /* enum cxlsim_pattern */
    uint32_t read_weight, write_weight; /* read:write mix, each 0-255, not both 0 (1:0 reads) */
} cxlsim_desc;
CXLSIM_DEFINE_INIT(cxlsim_desc)

typedef struct cxlsim_completion {
    size_t size;             /* sizeof, set by cxlsim_completion_init() */
    uint64_t id, start_cycle, end_cycle;
    uint32_t requester, lines;
} cxlsim_completion;
CXLSIM_DEFINE_INIT(cxlsim_completion)

/* What the model did since the backend opened. NaN where nothing was measured. */
typedef struct cxlsim_stats {
    size_t size;             /* sizeof, set by cxlsim_stats_init() */
    uint64_t cycles;
    double seconds;
    double read_gbps, write_gbps;
    double read_latency_ns[4], write_latency_ns[4]; /* mean, p50, p99, max */
    uint64_t reads, writes;                         /* lines completed at the requesters */
    double link_utilisation[2];                     /* [0] host to device (M2S), [1] device to host */
    double row_hit_rate;
    uint64_t row_conflicts, refreshes;
    double devload[4];                              /* fraction of S2M messages light..severe */
} cxlsim_stats;
CXLSIM_DEFINE_INIT(cxlsim_stats)

/* name NULL: "csim". */
CXLSIM_API int cxlsim_backend_open(const cxlsim_device *dev, const char *name, cxlsim_backend **out,
                                   cxlsim_error *err);
/* The same with options "KEY=VALUE" (noptions of them; options may be NULL when noptions is 0): for xrt,
 * "xclbin=FILE" (required), "card=N|BDF" (default 0), "timeout_ms=N" (one kernel run's limit). */
CXLSIM_API int cxlsim_backend_open_opts(const cxlsim_device *dev, const char *name, const char *const *options,
                                        size_t noptions, cxlsim_backend **out, cxlsim_error *err);
CXLSIM_API void cxlsim_backend_close(cxlsim_backend *b);
/* 1 when the library has backend `name` ("csim", "analytical"; "verilator", "xrt" where their module loads),
 * else 0. */
CXLSIM_API int cxlsim_backend_available(const char *name);
/* Queue n descriptors, all or none; CXLSIM_ELIMIT when a requester's queue has no room (see space). */
CXLSIM_API int cxlsim_backend_submit(cxlsim_backend *b, const cxlsim_desc *d, size_t n, cxlsim_error *err);
/* Descriptors requester r still takes. */
CXLSIM_API uint32_t cxlsim_backend_space(cxlsim_backend *b, uint32_t requester);
/* Run to cycle `until`, earlier when a completion is ready (stop_on_completion) or the completion buffer
 * is full. */
CXLSIM_API int cxlsim_backend_advance(cxlsim_backend *b, uint64_t until, int stop_on_completion, cxlsim_error *err);
CXLSIM_API uint64_t cxlsim_backend_now(cxlsim_backend *b);
/* Move up to max ready completions into out; returns how many. */
CXLSIM_API size_t cxlsim_backend_poll(cxlsim_backend *b, cxlsim_completion *out, size_t max);
/* 1 when nothing is queued or in flight. */
CXLSIM_API int cxlsim_backend_idle(cxlsim_backend *b);
CXLSIM_API int cxlsim_backend_stats(cxlsim_backend *b, cxlsim_stats *out, cxlsim_error *err);

/* ---- training: one iteration of an experiment (`cxlsim train`) ---- */

typedef struct cxlsim_experiment cxlsim_experiment;

enum cxlsim_breakdown {
    CXLSIM_BK_COMPUTE, CXLSIM_BK_TP_COMM, CXLSIM_BK_PP_COMM, CXLSIM_BK_DP_COMM, CXLSIM_BK_BUBBLE,
    CXLSIM_BK_CXL_STALL, CXLSIM_BK_N
};

typedef struct cxlsim_train_result {
    size_t size;             /* sizeof, set by cxlsim_train_result_init() */
    double iteration_s;
    double breakdown_s[CXLSIM_BK_N];   /* mean over pipeline stages; sums to iteration_s */
    double tokens_per_s, mfu, model_flops;
    uint64_t events, flows, kernels;
    uint32_t stages, collective_kinds;
    uint64_t cxl_transfers;            /* 0 without CXL memory */
    uint64_t cxl_detailed_cycles, cxl_extrapolated_cycles;
    char cxl_backend[16];
} cxlsim_train_result;
CXLSIM_DEFINE_INIT(cxlsim_train_result)

/* An experiment from a file or preset ("llama2-7b-2x8-h100"), with overrides as cxlsim_device_load. */
CXLSIM_API int cxlsim_experiment_load(const char *path_or_preset, const char *const *sets, size_t nsets,
                                      cxlsim_experiment **out, cxlsim_error *err);
/* The same from YAML text; display_name (may be NULL) names it in errors; the overrides as above (API 1.1:
 * 1.0 had no sets, nsets). */
CXLSIM_API int cxlsim_experiment_load_string(const char *yaml, const char *display_name, const char *const *sets,
                                             size_t nsets, cxlsim_experiment **out, cxlsim_error *err);
CXLSIM_API void cxlsim_experiment_free(cxlsim_experiment *x);
/* Simulate one iteration; backend NULL: the experiment's cxl.backend. */
CXLSIM_API int cxlsim_train(const cxlsim_experiment *x, const char *backend, cxlsim_train_result *out,
                            cxlsim_error *err);
/* "compute", "exposed_tp_comm", ... for a CXLSIM_BK_*; "?" out of range. */
CXLSIM_API const char *cxlsim_breakdown_name(int bk);

/* ---- collectives on a cluster (NCCL's choice and the collective model, no contention) ---- */

typedef struct cxlsim_cluster cxlsim_cluster;

/* all-to-all: NCCL's group of sends and receives (one phase, ring reported), as the engine's expert-parallel
 * exchange, with NCCL's send protocol: LL when bytes / ranks <= 16384 (NCCL_P2P_LL_THRESHOLD) or asked,
 * else Simple; LL128 is an error. The other operations follow NCCL's choice of algorithm and protocol */
enum cxlsim_coll_op { CXLSIM_ALLREDUCE = 0, CXLSIM_REDUCE_SCATTER = 1, CXLSIM_ALLGATHER = 2, CXLSIM_BROADCAST = 3,
                      CXLSIM_ALLTOALL = 4 };
enum cxlsim_coll_algo { CXLSIM_ALGO_RING = 0, CXLSIM_ALGO_TREE = 1, CXLSIM_ALGO_HIERARCHICAL = 2, CXLSIM_ALGO_AUTO = 3 };
enum cxlsim_coll_proto { CXLSIM_PROTO_LL = 0, CXLSIM_PROTO_LL128 = 1, CXLSIM_PROTO_SIMPLE = 2, CXLSIM_PROTO_AUTO = 3 };

typedef struct cxlsim_collective {
    size_t size;             /* sizeof, set by cxlsim_collective_init() */
    uint32_t op;             /* enum cxlsim_coll_op */
    uint64_t bytes;          /* buffer per rank (all-gather: the gathered output), as NCCL's nBytes */
    uint32_t ranks;          /* >= 1 */
    uint32_t ranks_per_node; /* ranks per NVLink domain (the node unless the cluster sets nvlink_domain); 0: min(ranks,
                              * the domain's GPUs) */
    uint32_t algo;           /* enum cxlsim_coll_algo */
    uint32_t proto;          /* enum cxlsim_coll_proto */
    uint32_t channels;       /* NCCL channels; 0: the cluster's nccl_channels */
} cxlsim_collective;
CXLSIM_DEFINE_INIT(cxlsim_collective)

typedef struct cxlsim_collective_result {
    size_t size;             /* sizeof, set by cxlsim_collective_result_init() */
    int64_t time_ps;
    uint32_t algo, proto;    /* what was planned (NCCL's pick for AUTO) */
    double algbw_gbps, busbw_gbps; /* nccl-tests' figures (0 for a time of 0) */
    uint32_t phases;
    uint64_t loops;          /* NCCL ring loops (ring, Simple), else 0 */
} cxlsim_collective_result;
CXLSIM_DEFINE_INIT(cxlsim_collective_result)

/* A cluster (configs/clusters, a file or preset) with the GPU whose NVLink joins a node (configs/gpus). */
CXLSIM_API int cxlsim_cluster_load(const char *cluster, const char *gpu, cxlsim_cluster **out, cxlsim_error *err);
/* The cluster and GPU of an experiment. */
CXLSIM_API int cxlsim_cluster_from_experiment(const cxlsim_experiment *x, cxlsim_cluster **out, cxlsim_error *err);
CXLSIM_API void cxlsim_cluster_free(cxlsim_cluster *c);
/* GPUs per node and nodes of the cluster. */
CXLSIM_API int cxlsim_cluster_shape(const cxlsim_cluster *c, uint32_t *gpus_per_node, uint32_t *nodes);
/* The time the training engine charges the collective when nothing else runs (the same plan and flow
 * times: host/train/collmodel.h). */
CXLSIM_API int cxlsim_collective_time(const cxlsim_cluster *c, const cxlsim_collective *req,
                                      cxlsim_collective_result *out, cxlsim_error *err);

/* ---- CXL transfers under load (the training engine's CXL memory, cxlmem) ---- */

typedef struct cxlsim_memory cxlsim_memory;

/* `domains` instances of the device on backend `name` (NULL: "csim"); exact 1: every cycle simulated. */
CXLSIM_API int cxlsim_memory_open(const cxlsim_device *dev, const char *backend, uint32_t domains, int exact,
                                  cxlsim_memory **out, cxlsim_error *err);
CXLSIM_API void cxlsim_memory_close(cxlsim_memory *m);
/* Start a transfer at at_ps (never before a time given earlier) in `domain` from host port `host`: bytes,
 * read:write weights (1:0 read, 0:1 write), cap_gbps a rate limit (0: none); `tag` comes back with it.
 * It runs together with every transfer already started: the load. */
CXLSIM_API int cxlsim_memory_start(cxlsim_memory *m, int64_t at_ps, uint32_t domain, uint32_t host, uint64_t bytes,
                                   uint32_t read_weight, uint32_t write_weight, double cap_gbps, uint32_t tag,
                                   cxlsim_error *err);
/* Run to the next completion before horizon_ps: returns 1 with its time and tag, 0 when none, < 0 on error. */
CXLSIM_API int cxlsim_memory_next(cxlsim_memory *m, int64_t horizon_ps, int64_t *t_ps, uint32_t *tag,
                                  cxlsim_error *err);
/* Start one transfer at at_ps and run until it completes; *duration_ps its time. Other transfers that
 * complete meanwhile are dropped from the completion stream (they are done). */
CXLSIM_API int cxlsim_memory_transfer(cxlsim_memory *m, int64_t at_ps, uint32_t domain, uint32_t host,
                                      uint64_t bytes, uint32_t read_weight, uint32_t write_weight,
                                      int64_t *duration_ps, cxlsim_error *err);

#ifdef __cplusplus
}
#endif

#endif
