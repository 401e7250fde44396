/* xclbin_write.c - builds the interface-only xclbin of xclbin_write.h. The binary layouts are those of
 * XRT's xrt/xclbin.h (axlf, axlf_header, axlf_section_header, mem_topology, ip_layout, connectivity),
 * written field by field at their offsets, little endian, so this file needs neither the XRT headers nor
 * libuuid and writes the same bytes on every host. What XRT 2.13 reads of it (xclbin_parser.cpp,
 * xrt_kernel.cpp): IP_LAYOUT names "kernel:instance" (xrtPLKernelOpen matches the kernel name before the
 * colon) and the control protocol in properties bits 15..8; CONNECTIVITY gives each pointer argument's
 * memory group (xrtKernelArgGroupId); from the XML, project.platform.device.core.kernel[@name] and its
 * <arg> attributes id, name, type, port, offset, size, hostSize, addressQualifier (1 pointer, 0 scalar)
 * and the slave <port>'s range, which bounds every offset + size. */
#define _POSIX_C_SOURCE 200809L

#include "xclbin_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../hw/hls/cxl_kernel_regs.h"

/* ---- the kernel's arguments: the one table, from cxl_kernel_regs.h and cxl_kernel() ---- */

typedef struct xa_arg {
    const char *name;   /* the parameter's name in cxl_kernel() */
    const char *type;   /* its C type as v++ writes it */
    uint32_t offset;    /* register offset (CXLK_*) */
    uint32_t size;      /* bytes in the register map (a pointer: 8) */
    int pointer;        /* m_axi (addressQualifier 1) or s_axilite scalar (0) */
} xa_arg;

static const xa_arg xa_args[CXLK_NARGS] = {
    [CXLK_ARG_PARAMS] = {"params", "const cxl_params*", CXLK_PARAMS, 8, 1},
    [CXLK_ARG_STATE] = {"state", "cxl_model*", CXLK_STATE, 8, 1},
    [CXLK_ARG_INIT] = {"init", "unsigned int", CXLK_INIT, 4, 0},
    [CXLK_ARG_DESCS] = {"descs", "const cxl_desc*", CXLK_DESCS, 8, 1},
    [CXLK_ARG_N_DESCS] = {"n_descs", "unsigned int", CXLK_N_DESCS, 4, 0},
    [CXLK_ARG_UNTIL] = {"until", "unsigned long long", CXLK_UNTIL, 8, 0},
    [CXLK_ARG_STOP] = {"stop", "unsigned int", CXLK_STOP, 4, 0},
    [CXLK_ARG_COMPS] = {"comps", "cxl_completion*", CXLK_COMPS, 8, 1},
    [CXLK_ARG_MAX_COMPS] = {"max_comps", "unsigned int", CXLK_MAX_COMPS, 4, 0},
    [CXLK_ARG_RESULT] = {"result", "cxl_kernel_result*", CXLK_RESULT, 8, 1},
    [CXLK_ARG_STATS] = {"stats", "cxl_stats*", CXLK_STATS, 8, 1},
    [CXLK_ARG_WANT_STATS] = {"want_stats", "unsigned int", CXLK_WANT_STATS, 4, 0},
};

/* ---- fixed content ---- */

#define XA_PLATFORM_VBNV "xilinx_u250_gen3x16_xdma_4_1_202210_1"
#define XA_CTRL_RANGE 0x1000u    /* s_axi_control range as v++ reports it (offsets end at 0x90) */
#define XA_CU_RANGE 0x10000u     /* address window of one compute unit */
#define XA_BANK_KB (16ull << 20) /* 16 GiB; mem_data.m_size is in KiB */

/* enums and masks of xclbin.h */
enum {
    XA_EMBEDDED_METADATA = 2, XA_MEM_TOPOLOGY = 6, XA_CONNECTIVITY = 7, XA_IP_LAYOUT = 8,
    XA_MEM_DDR4 = 1, XA_IP_KERNEL = 1, XA_AP_CTRL_HS = 0, XA_AP_CTRL_CHAIN = 1,
    XA_IP_INT_ENABLE = 0x1, XA_IP_CONTROL_SHIFT = 8, XA_XCLBIN_FLAT = 0
};

/* struct axlf: 496 bytes including the first section header; each further one adds 40 */
enum {
    XA_AXLF_SIZE = 496, XA_SECTION_HDR_SIZE = 40, XA_NSECTIONS = 4,
    XA_OFF_MAGIC = 0, XA_OFF_SIGLEN = 8, XA_OFF_RESERVED = 12, XA_LEN_RESERVED = 28, XA_OFF_KEYBLOCK = 40,
    XA_LEN_KEYBLOCK = 256, XA_OFF_UNIQUEID = 296,
    XA_OFF_HEADER = 304, /* struct axlf_header, 152 bytes: */
    XA_OFF_LENGTH = XA_OFF_HEADER + 0, XA_OFF_TIMESTAMP = XA_OFF_HEADER + 8,
    XA_OFF_VPATCH = XA_OFF_HEADER + 24, XA_OFF_VMAJOR = XA_OFF_HEADER + 26, XA_OFF_VMINOR = XA_OFF_HEADER + 27,
    XA_OFF_MODE = XA_OFF_HEADER + 28, XA_OFF_VBNV = XA_OFF_HEADER + 48, XA_LEN_VBNV = 64,
    XA_OFF_UUID = XA_OFF_HEADER + 112, XA_LEN_UUID = 16, XA_OFF_NUMSECTIONS = XA_OFF_HEADER + 144,
    XA_OFF_SECTIONS = 456, /* struct axlf_section_header: kind +0, name[16] +4, offset +24, size +32 */
    XA_HEADER_BYTES = XA_AXLF_SIZE + (XA_NSECTIONS - 1) * XA_SECTION_HDR_SIZE
};

/* mem_topology: m_count, then mem_data (40 bytes) at +8; ip_layout: m_count, then ip_data (80 bytes)
 * at +8; connectivity: m_count, then connection (12 bytes) at +4 */
enum { XA_MEM_TOPOLOGY_BYTES = 8 + 40, XA_IP_LAYOUT_BYTES = 8 + 80, XA_CONNECTION_BYTES = 12, XA_NAME_LEN = 64 };

/* XRT 2.13.466, the version this layout is taken from */
enum { XA_VERSION_MAJOR = 2, XA_VERSION_MINOR = 13, XA_VERSION_PATCH = 466 };

/* ---- helpers ---- */

static void xa_msg(char *msg, size_t msg_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void xa_msg(char *msg, size_t msg_size, const char *fmt, ...)
{
    if (!msg || msg_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msg_size, fmt, ap);
    va_end(ap);
}

static void put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static size_t align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* A growing, NUL-terminated string. `failed` sticks once an allocation fails. */
typedef struct xa_str {
    char *p;
    size_t len, cap;
    int failed;
} xa_str;

static void xs_printf(xa_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void xs_printf(xa_str *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(s->p ? s->p + s->len : NULL, s->p ? s->cap - s->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            s->failed = 1;
            return;
        }
        if (s->p && (size_t)n < s->cap - s->len) {
            s->len += (size_t)n;
            return;
        }
        size_t cap = s->cap ? s->cap : 4096;
        while (cap - s->len <= (size_t)n)
            cap *= 2;
        char *q = realloc(s->p, cap);
        if (!q) {
            s->failed = 1;
            return;
        }
        s->p = q;
        s->cap = cap;
    }
}

/* FNV-1a over the bytes, forwards or backwards from `basis`, then the splitmix64 finaliser. Two such
 * hashes make the uuid: not cryptographic, only distinct for distinct content. */
static uint64_t xa_hash(const unsigned char *p, size_t n, uint64_t basis, int backwards)
{
    uint64_t h = basis;
    for (size_t i = 0; i < n; i++) {
        h ^= p[backwards ? n - 1 - i : i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

static const char *xa_kernel_name(const cxl_xclbin_opts *o)
{
    return o && o->kernel_name ? o->kernel_name : CXL_XCLBIN_DEFAULT_KERNEL;
}

static cxl_xclbin_variant xa_variant(const cxl_xclbin_opts *o) { return o ? o->variant : CXL_XCLBIN_HLS; }

/* The master an argument is on. */
static const char *xa_port(const xa_arg *a, cxl_xclbin_variant v)
{
    if (!a->pointer)
        return "S_AXI_CONTROL";
    if (v == CXL_XCLBIN_RTL)
        return "M_AXI_GMEM";
    return "M_AXI_GMEM0"; /* HLS: every pointer on bundle gmem0 (cxl_kernel.c) */
}

/* ---- the sections ---- */

/* EMBEDDED_METADATA: the subset of v++'s XML that XRT reads, in v++'s shape. */
static void xa_xml(xa_str *s, const char *kname, cxl_xclbin_variant v)
{
    int rtl = v == CXL_XCLBIN_RTL;
    xs_printf(s,
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<project name=\"%s\">\n"
              "  <platform vendor=\"xilinx\" boardid=\"u250\" name=\"gen3x16_xdma_4_1\" featureRomTime=\"0\">\n"
              "    <version major=\"202210\" minor=\"1\"/>\n"
              "    <description/>\n"
              "    <device name=\"fpga0\" fpgaDevice=\"virtexuplus:xcu250:figd2104:-2L:e\" addrWidth=\"0\">\n"
              "      <core name=\"OCL_REGION_0\" target=\"hw\" type=\"clc_region\" clockFreq=\"0MHz\""
              " numComputeUnits=\"1\">\n"
              "        <kernelClocks>\n"
              "          <clock port=\"KERNEL_CLK\" frequency=\"300.000000MHz\"/>\n"
              "          <clock port=\"DATA_CLK\" frequency=\"300.000000MHz\"/>\n"
              "        </kernelClocks>\n"
              "        <kernel name=\"%s\" language=\"%s\" vlnv=\"%s:%s:1.0\" attributes=\"\""
              " preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" debug=\"false\" interrupt=\"true\""
              " hwControlProtocol=\"%s\">\n",
              kname, kname, rtl ? "ip_c" : "c", rtl ? "cxlsim:kernel" : "xilinx.com:hls", kname,
              rtl ? "ap_ctrl_hs" : "ap_ctrl_chain");
    /* one AXI master in each kernel: HLS bundle gmem0, RTL m_axi_gmem */
    xs_printf(s,
              "          <port name=\"%s\" mode=\"master\" range=\"0xFFFFFFFFFFFFFFFF\" dataWidth=\"64\""
              " portType=\"addressable\" base=\"0x0\"/>\n",
              rtl ? "M_AXI_GMEM" : "M_AXI_GMEM0");
    xs_printf(s,
              "          <port name=\"S_AXI_CONTROL\" mode=\"slave\" range=\"0x%X\" dataWidth=\"32\""
              " portType=\"addressable\" base=\"0x0\"/>\n",
              XA_CTRL_RANGE);
    for (int i = 0; i < CXLK_NARGS; i++) {
        const xa_arg *a = &xa_args[i];
        xs_printf(s,
                  "          <arg name=\"%s\" addressQualifier=\"%d\" id=\"%d\" port=\"%s\" size=\"0x%X\""
                  " offset=\"0x%X\" hostOffset=\"0x0\" hostSize=\"0x%X\" type=\"%s\"/>\n",
                  a->name, a->pointer ? 1 : 0, i, xa_port(a, v), (unsigned)a->size, (unsigned)a->offset,
                  (unsigned)a->size, a->type);
    }
    xs_printf(s,
              "          <compileWorkGroupSize x=\"1\" y=\"1\" z=\"1\"/>\n"
              "          <maxWorkGroupSize x=\"1\" y=\"1\" z=\"1\"/>\n"
              "          <string_table/>\n"
              "          <instance name=\"%s_1\">\n"
              "            <addrRemap base=\"0x%X\" range=\"0x%X\" port=\"S_AXI_CONTROL\"/>\n"
              "          </instance>\n"
              "        </kernel>\n"
              "      </core>\n"
              "    </device>\n"
              "  </platform>\n"
              "</project>\n",
              kname, CXL_XCLBIN_CU_BASE, XA_CU_RANGE);
}

static void xa_mem_topology(unsigned char *p)
{
    put_u32(p, 1);                       /* m_count */
    unsigned char *m = p + 8;            /* mem_data */
    m[0] = XA_MEM_DDR4;                  /* m_type */
    m[1] = 1;                            /* m_used */
    put_u64(m + 8, XA_BANK_KB);          /* m_size (KiB) */
    put_u64(m + 16, 0);                  /* m_base_address */
    memcpy(m + 24, "bank0", 5);          /* m_tag[16], NUL-terminated */
}

static void xa_ip_layout(unsigned char *p, const char *kname, cxl_xclbin_variant v)
{
    put_u32(p, 1);                       /* m_count */
    unsigned char *ip = p + 8;           /* ip_data */
    uint32_t ctrl = v == CXL_XCLBIN_RTL ? XA_AP_CTRL_HS : XA_AP_CTRL_CHAIN;
    put_u32(ip, XA_IP_KERNEL);           /* m_type */
    /* properties: interrupt enabled, interrupt id 0, control protocol in bits 15..8 */
    put_u32(ip + 4, XA_IP_INT_ENABLE | (ctrl << XA_IP_CONTROL_SHIFT));
    put_u64(ip + 8, CXL_XCLBIN_CU_BASE); /* m_base_address */
    snprintf((char *)ip + 16, XA_NAME_LEN, "%s:%s_1", kname, kname); /* m_name[64] */
}

static size_t xa_n_pointers(void)
{
    size_t n = 0;
    for (int i = 0; i < CXLK_NARGS; i++)
        n += xa_args[i].pointer ? 1u : 0u;
    return n;
}

static void xa_connectivity(unsigned char *p)
{
    put_u32(p, (uint32_t)xa_n_pointers()); /* m_count */
    unsigned char *c = p + 4;
    for (int i = 0; i < CXLK_NARGS; i++) {
        if (!xa_args[i].pointer)
            continue;
        put_u32(c, (uint32_t)i); /* arg_index */
        put_u32(c + 4, 0);       /* m_ip_layout_index */
        put_u32(c + 8, 0);       /* mem_data_index */
        c += XA_CONNECTION_BYTES;
    }
}

/* ---- public ---- */

int cxl_xclbin_check_opts(const cxl_xclbin_opts *o, char *msg, size_t msg_size)
{
    const char *k = xa_kernel_name(o);
    size_t n = strlen(k);
    int ok = n > 0 && n <= CXL_XCLBIN_MAX_NAME && !(k[0] >= '0' && k[0] <= '9');
    for (size_t i = 0; ok && i < n; i++) {
        char c = k[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (!ok) {
        xa_msg(msg, msg_size,
               "kernel name '%s': expected a C identifier of 1 to %d characters (letters, digits, '_'; "
               "not starting with a digit)",
               k, CXL_XCLBIN_MAX_NAME);
        return -1;
    }
    cxl_xclbin_variant v = xa_variant(o);
    if (v != CXL_XCLBIN_HLS && v != CXL_XCLBIN_RTL) {
        xa_msg(msg, msg_size, "variant %d: expected CXL_XCLBIN_HLS (0) or CXL_XCLBIN_RTL (1)", (int)v);
        return -1;
    }
    return 0;
}

int cxl_xclbin_build(const cxl_xclbin_opts *o, unsigned char **out, size_t *out_len, char *msg,
                     size_t msg_size)
{
    *out = NULL;
    *out_len = 0;
    if (cxl_xclbin_check_opts(o, msg, msg_size))
        return -1;
    const char *kname = xa_kernel_name(o);
    cxl_xclbin_variant v = xa_variant(o);

    /* the table must cover every argument, inside the control range */
    for (int i = 0; i < CXLK_NARGS; i++) {
        if (!xa_args[i].name || xa_args[i].offset + xa_args[i].size > XA_CTRL_RANGE) {
            xa_msg(msg, msg_size, "xclbin_write.c: argument %d missing from the table or outside 0x%X", i,
                   XA_CTRL_RANGE);
            return -1;
        }
    }

    xa_str xml = {0};
    xa_xml(&xml, kname, v);
    if (xml.failed) {
        free(xml.p);
        xa_msg(msg, msg_size, "out of memory building the xclbin metadata");
        return -1;
    }

    struct {
        uint32_t kind;
        const char *name;
        size_t size;
        size_t offset;
    } sec[XA_NSECTIONS] = {
        {XA_MEM_TOPOLOGY, "mem_topology", XA_MEM_TOPOLOGY_BYTES, 0},
        {XA_IP_LAYOUT, "ip_layout", XA_IP_LAYOUT_BYTES, 0},
        {XA_CONNECTIVITY, "connectivity", 4 + XA_CONNECTION_BYTES * xa_n_pointers(), 0},
        {XA_EMBEDDED_METADATA, "metadata", xml.len, 0},
    };
    size_t total = align8(XA_HEADER_BYTES);
    for (int i = 0; i < XA_NSECTIONS; i++) {
        sec[i].offset = total;
        total = align8(total + sec[i].size);
    }

    unsigned char *b = calloc(1, total);
    if (!b) {
        free(xml.p);
        xa_msg(msg, msg_size, "out of memory building the xclbin (%zu bytes)", total);
        return -1;
    }

    memcpy(b + XA_OFF_MAGIC, "xclbin2", 8); /* with its NUL */
    put_u32(b + XA_OFF_SIGLEN, 0xFFFFFFFFu);  /* -1: no signature */
    memset(b + XA_OFF_RESERVED, 0xFF, XA_LEN_RESERVED);
    memset(b + XA_OFF_KEYBLOCK, 0xFF, XA_LEN_KEYBLOCK);
    put_u64(b + XA_OFF_UNIQUEID, 0);
    put_u64(b + XA_OFF_LENGTH, total);
    put_u64(b + XA_OFF_TIMESTAMP, 0); /* fixed, for byte-identical output */
    put_u16(b + XA_OFF_VPATCH, XA_VERSION_PATCH);
    b[XA_OFF_VMAJOR] = XA_VERSION_MAJOR;
    b[XA_OFF_VMINOR] = XA_VERSION_MINOR;
    put_u16(b + XA_OFF_MODE, XA_XCLBIN_FLAT);
    memcpy(b + XA_OFF_VBNV, XA_PLATFORM_VBNV, sizeof XA_PLATFORM_VBNV);
    put_u32(b + XA_OFF_NUMSECTIONS, XA_NSECTIONS);
    for (int i = 0; i < XA_NSECTIONS; i++) {
        unsigned char *h = b + XA_OFF_SECTIONS + (size_t)i * XA_SECTION_HDR_SIZE;
        put_u32(h, sec[i].kind);
        memcpy(h + 4, sec[i].name, strlen(sec[i].name)); /* m_sectionName[16], NUL-padded */
        put_u64(h + 24, sec[i].offset);
        put_u64(h + 32, sec[i].size);
    }
    xa_mem_topology(b + sec[0].offset);
    xa_ip_layout(b + sec[1].offset, kname, v);
    xa_connectivity(b + sec[2].offset);
    memcpy(b + sec[3].offset, xml.p, xml.len);
    free(xml.p);

    /* uuid: hash of the file with the uuid field still zero; marked RFC 4122 version 8 (custom) */
    uint64_t h1 = xa_hash(b, total, 0xcbf29ce484222325ull, 0);
    uint64_t h2 = xa_hash(b, total, 0x84222325cbf29ce4ull, 1);
    unsigned char *u = b + XA_OFF_UUID;
    for (int i = 0; i < 8; i++) {
        u[i] = (unsigned char)(h1 >> (56 - 8 * i));
        u[8 + i] = (unsigned char)(h2 >> (56 - 8 * i));
    }
    u[6] = (unsigned char)((u[6] & 0x0F) | 0x80);
    u[8] = (unsigned char)((u[8] & 0x3F) | 0x80);

    *out = b;
    *out_len = total;
    return 0;
}

/* Write all of buf to fd. 0, or -1 with errno. */
static int xa_write_all(int fd, const unsigned char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int cxl_xclbin_write(const char *path, const cxl_xclbin_opts *o, char *msg, size_t msg_size)
{
    if (!path || !*path) {
        xa_msg(msg, msg_size, "no output file name given");
        return -1;
    }
    unsigned char *buf;
    size_t len;
    if (cxl_xclbin_build(o, &buf, &len, msg, msg_size))
        return -1;

    size_t tcap = strlen(path) + 48;
    char *tmp = malloc(tcap);
    if (!tmp) {
        free(buf);
        xa_msg(msg, msg_size, "%s: out of memory", path);
        return -1;
    }
    /* O_EXCL: never reuse a name someone else holds; mode 0666 less the umask, as for any new file */
    int fd = -1;
    for (unsigned n = 0; n < 100 && fd < 0; n++) {
        snprintf(tmp, tcap, "%s.tmp.%ld.%u", path, (long)getpid(), n);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        xa_msg(msg, msg_size, "%s: cannot create temporary file %s: %s", path, tmp, strerror(errno));
        free(tmp);
        free(buf);
        return -1;
    }
    const char *what = "write";
    int rc = xa_write_all(fd, buf, len);
    if (rc == 0 && fsync(fd) != 0) {
        what = "fsync";
        rc = -1;
    }
    int err = errno;
    if (close(fd) != 0 && rc == 0) {
        what = "close";
        err = errno;
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        what = "rename";
        err = errno;
        rc = -1;
    }
    if (rc != 0) {
        xa_msg(msg, msg_size, "%s: %s of temporary file %s failed: %s", path, what, tmp, strerror(err));
        unlink(tmp);
    }
    free(tmp);
    free(buf);
    return rc;
}
