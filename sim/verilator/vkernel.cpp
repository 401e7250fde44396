// vkernel.cpp - the harness of the verilated hw/rtl/cxl_kernel.v (see vkernel.h): owns the
// VerilatedContext, the model and the optional FST writer; one clock is a low and a high eval.
// One build of the top per name in CMake's CXLSIM_RTL_BUILDS is linked in (hw/rtl/builds.txt, listed
// by the generated rtl_builds.h); a handle runs the smallest that fits its configuration.
#include "vkernel.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "rtl_builds.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif

namespace {

// One verilated build of the top, behind the calls the harness makes (the generated classes share no
// base with the ports). A traced twin (Verilator --trace-fst) also records into an FST writer.
struct top_if {
    virtual ~top_if() = default;
    virtual void drive(const vk_in &in) = 0;
    virtual void sample(vk_out &o) const = 0;
    virtual void clock(uint8_t clk) = 0;     // set ap_clk and evaluate
    virtual void reset(uint8_t rst_n) = 0;   // set ap_rst_n (evaluated with the next clock)
    virtual void final() = 0;
    virtual uint64_t now() const = 0;        // cxl_model's `now`
#if VM_TRACE_FST
    virtual void trace(VerilatedFstC *f) = 0;
#endif
};

// TR: T is a traced twin (generated with --trace-fst), whose trace() exists

template <class T> void drive(T &t, const vk_in &in);
template <class T> void sample(const T &t, vk_out &o);

template <class T, bool TR> struct top_of final : top_if {
    T t;
    explicit top_of(VerilatedContext *c) : t(c, "TOP") {}
    void drive(const vk_in &in) override { ::drive(t, in); }
    void sample(vk_out &o) const override { ::sample(t, o); }
    void clock(uint8_t clk) override
    {
        t.ap_clk = clk;
        t.eval();
    }
    void reset(uint8_t rst_n) override { t.ap_rst_n = rst_n; }
    void final() override { t.final(); }
    uint64_t now() const override { return t.rootp->cxl_kernel__DOT__now; }
#if VM_TRACE_FST
    void trace(VerilatedFstC *f) override
    {
        if constexpr (TR)
            t.trace(f, 99);
        else
            (void)f;
    }
#endif
};

// A build compiled in: its name, the sizes it has (cxl_kernel's NH, ND, NCH, NB, NQ, SW) and its constructor.
struct build_desc {
    const char *name;
    unsigned hosts, devices, channels, banks, queue;
    bool sw;
    top_if *(*make)(VerilatedContext *c);
};

// A build's traced twin (CMake CXLSIM_RTL_TRACE), by the build's name.
struct traced_desc {
    const char *name;
    top_if *(*make)(VerilatedContext *c);
};

#define VK_BUILD(id, name, nh, nd, nch, nb, nq, sw)                                                        \
    { name, nh, nd, nch, nb, nq, sw != 0,                                                                  \
      [](VerilatedContext *c) -> top_if * { return new top_of<Vcxl_kernel_##id, false>(c); } },
const build_desc builds[] = { CXLSIM_RTL_BUILD_LIST(VK_BUILD) };
#undef VK_BUILD
constexpr size_t n_builds = sizeof builds / sizeof builds[0];

#define VK_TRACED(id, name) { name, [](VerilatedContext *c) -> top_if * { return new top_of<Vcxl_kernel_##id##_tr, true>(c); } },
const traced_desc traced[] = { CXLSIM_RTL_TRACE_LIST(VK_TRACED) { nullptr, nullptr } };
#undef VK_TRACED
constexpr size_t n_traced = sizeof traced / sizeof traced[0] - 1;

// the traced twin of build b, or nullptr
const traced_desc *twin_of(const build_desc &b)
{
    for (size_t i = 0; i < n_traced; i++)
        if (!std::strcmp(traced[i].name, b.name))
            return &traced[i];
    return nullptr;
}

bool fits(const build_desc &b, const vkernel_opts &o)
{
    return o.hosts <= b.hosts && o.devices <= b.devices && o.channels <= b.channels && o.banks <= b.banks &&
           o.queue <= b.queue && (!o.sw || b.sw);
}

// the build a handle runs, or nullptr (msg says why)
const build_desc *choose(const vkernel_opts *o, std::string &msg)
{
    if (o && o->build) {
        for (const build_desc &b : builds)
            if (!std::strcmp(b.name, o->build))
                return &b;
        msg = std::string("no RTL kernel build '") + o->build + "' in this binary (compiled in: " +
              CXLSIM_RTL_BUILD_NAMES + "; CMake option CXLSIM_RTL_BUILDS, hw/rtl/builds.txt)";
        return nullptr;
    }
    if (!o || !o->hosts || !o->devices || !o->channels)
        return &builds[n_builds - 1];
    for (const build_desc &b : builds)
        if (fits(b, *o))
            return &b;
    msg = std::string("the RTL kernel builds compiled in (") + CXLSIM_RTL_BUILD_NAMES +
          ") have fewer host ports, devices, DRAM channels, banks or DRAM queue entries than the configuration (" +
          std::to_string(o->hosts) + " host ports, " + std::to_string(o->devices) + " devices of " +
          std::to_string(o->channels) + " DRAM channels of " + std::to_string(o->banks) + " banks and " +
          std::to_string(o->queue) + "-entry queues, " + (o->sw ? "with a switch" : "no switch") +
          "), or no switch where it has one: reconfigure with a build that fits in -DCXLSIM_RTL_BUILDS "
          "(hw/rtl/builds.txt: card-1x1, card-pool, full)";
    return nullptr;
}

}  // namespace

struct vkernel {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<top_if> top;
    const char *build = "";
#if VM_TRACE_FST
    std::unique_ptr<VerilatedFstC> fst;
#endif
    uint64_t trace_from = 0, trace_to = UINT64_MAX;  // the model cycles the waveform records
    uint64_t clocks = 0;
    bool failed = false;
    std::string log;  // Verilator's prints since the last clock
    std::string err;
};

// Verilator prints through VL_PRINTF (vkernel_vl.h) with no context argument: the handle being evaluated
// is published here for the length of each eval (thread-local, so handles on other threads stay apart).
static thread_local vkernel *tl_sink = nullptr;

extern "C" void vkernel_vl_printf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (tl_sink) {
        if (tl_sink->log.size() < 4096)
            tl_sink->log += buf;
    } else {
        std::fputs(buf, stderr);  // outside any eval (cannot happen with this design; kept visible)
    }
}

namespace {

struct sink_scope {
    explicit sink_scope(vkernel *k)
    {
        tl_sink = k;
        Verilated::threadContextp(k->ctx.get());
    }
    ~sink_scope() { tl_sink = nullptr; }
    sink_scope(const sink_scope &) = delete;
    sink_scope &operator=(const sink_scope &) = delete;
};

void put(char *msg, size_t cap, const std::string &s)
{
    if (cap)
        std::snprintf(msg, cap, "%s", s.c_str());
}

template <class T> void drive(T &t, const vk_in &in)
{
    t.s_axi_control_AWVALID = in.ctl.awvalid;
    t.s_axi_control_AWADDR = (uint8_t)in.ctl.awaddr;
    t.s_axi_control_WVALID = in.ctl.wvalid;
    t.s_axi_control_WDATA = in.ctl.wdata;
    t.s_axi_control_WSTRB = in.ctl.wstrb;
    t.s_axi_control_BREADY = in.ctl.bready;
    t.s_axi_control_ARVALID = in.ctl.arvalid;
    t.s_axi_control_ARADDR = (uint8_t)in.ctl.araddr;
    t.s_axi_control_RREADY = in.ctl.rready;
    t.m_axi_gmem_AWREADY = in.mem.awready;
    t.m_axi_gmem_WREADY = in.mem.wready;
    t.m_axi_gmem_BVALID = in.mem.bvalid;
    t.m_axi_gmem_BRESP = in.mem.bresp;
    t.m_axi_gmem_ARREADY = in.mem.arready;
    t.m_axi_gmem_RVALID = in.mem.rvalid;
    t.m_axi_gmem_RDATA = in.mem.rdata;
    t.m_axi_gmem_RRESP = in.mem.rresp;
    t.m_axi_gmem_RLAST = in.mem.rlast;
}

template <class T> void sample(const T &t, vk_out &o)
{
    o.ctl.awready = t.s_axi_control_AWREADY;
    o.ctl.wready = t.s_axi_control_WREADY;
    o.ctl.bvalid = t.s_axi_control_BVALID;
    o.ctl.bresp = t.s_axi_control_BRESP;
    o.ctl.arready = t.s_axi_control_ARREADY;
    o.ctl.rvalid = t.s_axi_control_RVALID;
    o.ctl.rresp = t.s_axi_control_RRESP;
    o.ctl.rdata = t.s_axi_control_RDATA;
    o.interrupt = t.__SYM__interrupt;  // Verilator renames the C++ keyword-like port
    o.mem.awvalid = t.m_axi_gmem_AWVALID;
    o.mem.awaddr = t.m_axi_gmem_AWADDR;
    o.mem.awlen = t.m_axi_gmem_AWLEN;
    o.mem.awsize = t.m_axi_gmem_AWSIZE;
    o.mem.awburst = t.m_axi_gmem_AWBURST;
    o.mem.wvalid = t.m_axi_gmem_WVALID;
    o.mem.wdata = t.m_axi_gmem_WDATA;
    o.mem.wstrb = t.m_axi_gmem_WSTRB;
    o.mem.wlast = t.m_axi_gmem_WLAST;
    o.mem.bready = t.m_axi_gmem_BREADY;
    o.mem.arvalid = t.m_axi_gmem_ARVALID;
    o.mem.araddr = t.m_axi_gmem_ARADDR;
    o.mem.arlen = t.m_axi_gmem_ARLEN;
    o.mem.arsize = t.m_axi_gmem_ARSIZE;
    o.mem.arburst = t.m_axi_gmem_ARBURST;
    o.mem.rready = t.m_axi_gmem_RREADY;
}

bool active(const vk_out &o)
{
    return o.mem.arvalid || o.mem.awvalid || o.mem.wvalid || o.ctl.bvalid || o.ctl.rvalid || o.interrupt;
}

uint64_t model_now(const vkernel &k) { return k.top->now(); }

// after an eval: an RTL error or $finish ends the handle's life
int check(vkernel &k)
{
    if (!k.ctx->gotError() && !k.ctx->gotFinish()) {
        k.log.clear();
        return VK_OK;
    }
    k.failed = true;
    std::string text = k.log;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    for (char &c : text)
        if (c == '\n')
            c = ';';
    k.err = std::string(k.ctx->gotError() ? "RTL assertion failed" : "RTL called $finish") + " at model cycle " +
            std::to_string(model_now(k)) + " (clock " + std::to_string(k.clocks) + "): " +
            (text.empty() ? std::string("(no message)") : text);
    return VK_ERTL;
}

// one half clock: the design settles, then time moves on and the waveform (if any) records it
void settle(vkernel &k, uint8_t clk)
{
    k.top->clock(clk);
}

void record(vkernel &k)
{
    k.ctx->timeInc(1);
#if VM_TRACE_FST
    if (k.fst) {
        const uint64_t now = k.top->now();
        if (now >= k.trace_from && now <= k.trace_to)
            k.fst->dump(k.ctx->time());
    }
#endif
}

void half(vkernel &k, uint8_t clk)
{
    settle(k, clk);
    record(k);
}

int fail_internal(vkernel *k, const char *what)
{
    if (k) {
        k->failed = true;
        k->err = std::string("Verilator harness: ") + what;
    }
    return VK_EINTERNAL;
}

}  // namespace

extern "C" int vkernel_can_trace(void) { return VM_TRACE_FST && n_traced > 0 ? 1 : 0; }

extern "C" int vkernel_create(const vkernel_opts *o, vkernel **out, char *msg, size_t cap)
{
    *out = nullptr;
    put(msg, cap, "");
    vkernel *k = nullptr;
    try {
        const char *trace = o ? o->trace_fst : nullptr;
        if (trace && !vkernel_can_trace()) {
            put(msg, cap, "this binary has no traced kernel builds: reconfigure with -DCXLSIM_RTL_TRACE=ON and rebuild");
            return VK_ENOTRACE;
        }
        if (trace) {
            // Verilator's FST writer does not report an unwritable file: find out first
            FILE *f = std::fopen(trace, "wb");
            if (!f) {
                put(msg, cap, std::string("cannot write the FST trace '") + trace + "': " + std::strerror(errno));
                return VK_EIO;
            }
            std::fclose(f);
        }
        std::string why;
        const build_desc *b = choose(o, why);
        if (!b) {
            put(msg, cap, why);
            return VK_ENOFIT;
        }
        const traced_desc *tw = trace ? twin_of(*b) : nullptr;
        if (trace && !tw) {
            put(msg, cap, std::string("the kernel build ") + b->name + " has no traced twin in this binary");
            return VK_ENOTRACE;
        }
        k = new vkernel;
        k->ctx.reset(new VerilatedContext);
        k->ctx->fatalOnError(false);  // $fatal/$stop set gotError/gotFinish instead of aborting
        k->ctx->traceEverOn(trace != nullptr);
        sink_scope scope(k);
        k->top.reset(tw ? tw->make(k->ctx.get()) : b->make(k->ctx.get()));
        k->build = b->name;
        if (o && o->trace_to) {
            k->trace_from = o->trace_from;
            k->trace_to = o->trace_to;
        }
#if VM_TRACE_FST
        if (trace) {
            k->fst.reset(new VerilatedFstC);
            k->top->trace(k->fst.get());
            k->fst->open(trace);
            if (!k->fst->isOpen())
                throw std::runtime_error(std::string("cannot open the FST trace '") + trace + "'");
        }
#endif
        vk_in idle;
        std::memset(&idle, 0, sizeof idle);
        k->top->drive(idle);
        k->top->reset(0);
        for (int i = 0; i < 4; i++) {
            half(*k, 0);
            half(*k, 1);
        }
        k->top->reset(1);
        int rc = check(*k);
        if (rc) {
            put(msg, cap, k->err);
            delete k;
            return rc;
        }
        *out = k;
        return VK_OK;
    } catch (const std::bad_alloc &) {
        delete k;
        put(msg, cap, "out of memory creating the Verilator model");
        return VK_ENOMEM;
    } catch (const std::exception &e) {
        delete k;
        put(msg, cap, std::string("Verilator harness: ") + e.what());
        return VK_EINTERNAL;
    } catch (...) {
        delete k;
        put(msg, cap, "Verilator harness: unknown exception");
        return VK_EINTERNAL;
    }
}

extern "C" void vkernel_destroy(vkernel *k)
{
    if (!k)
        return;
    try {
        sink_scope scope(k);
        if (!k->failed)
            k->top->final();
#if VM_TRACE_FST
        if (k->fst)
            k->fst->close();
#endif
    } catch (...) {
        // nothing useful to report while tearing down
    }
    delete k;
}

extern "C" int vkernel_clock(vkernel *k, const vk_in *in, vk_out *out)
{
    if (k->failed)
        return VK_ERTL;
    try {
        sink_scope scope(k);
        k->top->drive(*in);
        half(*k, 0);
        k->top->sample(*out);
        half(*k, 1);
        k->clocks++;
        return check(*k);
    } catch (const std::exception &e) {
        return fail_internal(k, e.what());
    } catch (...) {
        return fail_internal(k, "unknown exception");
    }
}

extern "C" int vkernel_idle(vkernel *k, const vk_in *in, uint64_t n, vk_out *out, uint64_t *done)
{
    *done = 0;
    if (k->failed)
        return VK_ERTL;
    try {
        sink_scope scope(k);
        k->top->drive(*in);
        for (uint64_t i = 0;; i++) {
            // look before the clock is recorded: a clock the caller must answer is redone by vkernel_clock
            settle(*k, 0);
            k->top->sample(*out);
            if (i == n || active(*out))
                return VK_OK;
            record(*k);
            half(*k, 1);
            k->clocks++;
            *done = i + 1;
            int rc = check(*k);
            if (rc)
                return rc;
        }
    } catch (const std::exception &e) {
        return fail_internal(k, e.what());
    } catch (...) {
        return fail_internal(k, "unknown exception");
    }
}

extern "C" uint64_t vkernel_clocks(const vkernel *k) { return k->clocks; }
extern "C" const char *vkernel_build(const vkernel *k) { return k->build; }
extern "C" const char *vkernel_builds(void) { return CXLSIM_RTL_BUILD_NAMES; }
extern "C" uint64_t vkernel_model_now(const vkernel *k) { return model_now(*k); }
extern "C" const char *vkernel_error(const vkernel *k) { return k->err.c_str(); }
