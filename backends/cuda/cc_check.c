/* The compute-capability decision (see cc_check.h for the rules). Plain C11:
 * built into the static library bp_cuda_cc even where CUDA is absent. */
#include "cc_check.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Recorded by backends/cuda/CMakeLists.txt; empty when CUDA is not built. */
#ifndef BPCU_BUILD_SASS
#define BPCU_BUILD_SASS ""
#endif
#ifndef BPCU_BUILD_PTX
#define BPCU_BUILD_PTX ""
#endif
#ifndef BPCU_BUILD_CMAKE_ARCHS
#define BPCU_BUILD_CMAKE_ARCHS ""
#endif
#ifndef BPCU_BUILD_RUNTIME
#define BPCU_BUILD_RUNTIME 0
#endif

const char *bpcu_build_sass(void) { return BPCU_BUILD_SASS; }
const char *bpcu_build_ptx(void) { return BPCU_BUILD_PTX; }
const char *bpcu_build_cmake_archs(void) { return BPCU_BUILD_CMAKE_ARCHS; }
int bpcu_build_runtime_version(void) { return BPCU_BUILD_RUNTIME; }

const char *bpcu_verdict_name(bpcu_verdict v)
{
    switch (v) {
    case BPCU_NATIVE: return "native";
    case BPCU_JIT: return "jit";
    case BPCU_FORCED: return "forced";
    case BPCU_UNSUPPORTED: return "unsupported";
    }
    return "unsupported";
}

/* ---- formatting ---------------------------------------------------------- */

static const char *suffix_str(bpcu_arch_suffix s)
{
    return s == BPCU_ARCH_A ? "a" : s == BPCU_ARCH_F ? "f" : "";
}

static void arch_name(const bpcu_arch *a, const char *prefix, char *buf, size_t size)
{
    snprintf(buf, size, "%s%d%s", prefix, a->major * 10 + a->minor, suffix_str(a->suffix));
}

const char *bpcu_format_arch_list(const bpcu_arch_list *l, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    buf[0] = '\0';
    if (!l || l->count == 0) {
        snprintf(buf, size, "none");
        return buf;
    }
    size_t len = 0;
    for (int i = 0; i < l->count && len < size; i++) {
        int n = snprintf(buf + len, size - len, "%s%d%s", i ? "," : "",
                         l->arch[i].major * 10 + l->arch[i].minor, suffix_str(l->arch[i].suffix));
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return buf;
}

const char *bpcu_format_version(int version, char *buf, size_t size)
{
    if (version <= 0)
        snprintf(buf, size, "none");
    else
        snprintf(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
    return buf;
}

static void setf(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void setf(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, size, fmt, ap);
    va_end(ap);
}

/* ---- the rules ----------------------------------------------------------- */

static int cc_cmp(int amaj, int amin, int bmaj, int bmin)
{
    if (amaj != bmaj)
        return amaj < bmaj ? -1 : 1;
    return amin < bmin ? -1 : amin > bmin ? 1 : 0;
}

static bool sass_runs(const bpcu_arch *a, int maj, int min)
{
    if (a->suffix == BPCU_ARCH_A)
        return a->major == maj && a->minor == min;
    return a->major == maj && min >= a->minor; /* plain and f: the same major */
}

static bool ptx_runs(const bpcu_arch *a, int maj, int min)
{
    if (a->suffix == BPCU_ARCH_A)
        return a->major == maj && a->minor == min;
    if (a->suffix == BPCU_ARCH_F)
        return a->major == maj && min >= a->minor;
    return cc_cmp(maj, min, a->major, a->minor) >= 0;
}

/* The best image of l that runs (the highest; on a tie the most specific),
 * or NULL. */
static const bpcu_arch *best(const bpcu_arch_list *l, int maj, int min,
                             bool (*runs)(const bpcu_arch *, int, int))
{
    const bpcu_arch *b = NULL;
    for (int i = 0; l && i < l->count; i++) {
        const bpcu_arch *a = &l->arch[i];
        if (!runs(a, maj, min))
            continue;
        int c = b ? cc_cmp(a->major, a->minor, b->major, b->minor) : 1;
        if (c > 0 || (c == 0 && a->suffix == BPCU_ARCH_A) ||
            (c == 0 && a->suffix == BPCU_ARCH_F && b->suffix == BPCU_ARCH_PLAIN))
            b = a;
    }
    return b;
}

static bool cc_listed(const bpcu_cc_list *l, int maj, int min)
{
    for (int i = 0; l && i < l->count; i++)
        if (l->cc[i].major == maj && l->cc[i].minor == min)
            return true;
    return false;
}

/* ---- remedies: only ones that can work --------------------------------------- */

/* The first CUDA toolkit that builds sm_XY (CUDA's integer), 0 if this table
 * does not know the architecture. */
static int arch_min_toolkit(int xy)
{
    static const struct { int xy, cuda; } t[] = {
        {50, 6000}, {52, 6050}, {53, 6050}, {60, 8000}, {61, 8000}, {62, 8000},
        {70, 9000}, {72, 10000}, {75, 10000}, {80, 11000}, {86, 11010}, {87, 11040},
        {89, 11080}, {90, 11080}, {100, 12080}, {101, 12080}, {103, 12090}, {110, 13000},
        {120, 12080}, {121, 12090},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].xy == xy)
            return t[i].cuda;
    return 0;
}

/* CUDA 13 dropped everything below sm_75; CUDA 12.9 was the last to build it. */
#define LAST_TOOLKIT_BELOW_75 12090
#define FIRST_TOOLKIT_WITHOUT_BELOW_75 13000

/* The NVIDIA driver (Linux) and the CUDA version it supports, which is what
 * nvidia-smi prints as "CUDA Version": each row is the first release of a
 * CUDA version, from the CUDA toolkit release notes (12.7 had no toolkit;
 * its driver branch, 565, reports it). */
static const struct {
    int cuda;
    int release[3]; /* 580.65.06 */
} driver_table[] = {
    {10000, {410, 48, 0}},   {10010, {418, 39, 0}},   {10020, {440, 33, 0}},
    {11000, {450, 36, 6}},   {11010, {455, 23, 0}},   {11020, {460, 27, 3}},
    {11030, {465, 19, 1}},   {11040, {470, 42, 1}},   {11050, {495, 29, 5}},
    {11060, {510, 39, 1}},   {11070, {515, 43, 4}},   {11080, {520, 61, 5}},
    {12000, {525, 60, 13}},  {12010, {530, 30, 2}},   {12020, {535, 54, 3}},
    {12030, {545, 23, 6}},   {12040, {550, 54, 14}},  {12050, {555, 42, 2}},
    {12060, {560, 28, 3}},   {12070, {565, 57, 1}},   {12080, {570, 26, 0}},
    {12090, {575, 51, 3}},   {13000, {580, 65, 6}},   {13010, {590, 44, 1}},
};
#define DRIVER_ROWS (sizeof driver_table / sizeof driver_table[0])

static void release_text(const int r[3], char *buf, size_t size)
{
    if (r[2])
        snprintf(buf, size, "%d.%02d.%02d", r[0], r[1], r[2]);
    else
        snprintf(buf, size, "%d.%02d", r[0], r[1]);
}

const char *bpcu_driver_min_release(int cuda, char *buf, size_t size)
{
    for (size_t i = 0; i < DRIVER_ROWS; i++)
        if (driver_table[i].cuda >= cuda) {
            release_text(driver_table[i].release, buf, size);
            return buf;
        }
    return NULL;
}

/* "supports CUDA 13.0 or newer (release 580.65.06 or newer)": a remedy's
 * words for the driver it needs, by the CUDA version it supports and by its
 * own release number, never one dressed as the other. */
static void driver_for(int cuda, char *buf, size_t size)
{
    char v[16], rel[24];
    bpcu_format_version(cuda, v, sizeof v);
    if (bpcu_driver_min_release(cuda, rel, sizeof rel))
        snprintf(buf, size, "supports CUDA %s or newer (release %s or newer)", v, rel);
    else
        snprintf(buf, size, "supports CUDA %s or newer", v);
}

/* What rebuilding for a device of sm_XY takes, as one clause starting with
 * "rebuild", "build" or "update" (when the toolkit sm_XY needs is newer than
 * the driver, the driver must be updated first). ptx adds the PTX spelling,
 * which the driver JIT-compiles. */
static void rebuild_advice(const bpcu_cc_input *in, int xy, bool ptx, char *buf, size_t size)
{
    char need[16], used[16], drv[16];
    int min = arch_min_toolkit(xy), rt = in->runtime_version, driver = in->driver_version;
    bpcu_format_version(min, need, sizeof need);
    bpcu_format_version(rt, used, sizeof used);
    bpcu_format_version(driver, drv, sizeof drv);
    if (min == 0) {
        setf(buf, size, "rebuild with a CUDA toolkit that builds sm_%d and CMAKE_CUDA_ARCHITECTURES "
             "including %d-real, or with PTX of an older architecture that it can JIT-compile "
             "(e.g. 120-virtual)", xy, xy);
        return;
    }
    if (driver > 0 && min > driver) {
        char want[128];
        driver_for(min, want, sizeof want);
        setf(buf, size, "update the NVIDIA driver to one that %s and rebuild with "
             "CMAKE_CUDA_ARCHITECTURES including %d-real "
             "(sm_%d needs CUDA %s or newer; the driver supports CUDA %s)", want, xy, xy, need, drv);
        return;
    }
    char ptx_s[48] = "";
    if (ptx)
        snprintf(ptx_s, sizeof ptx_s, " (or %d-virtual for PTX)", xy);
    if (xy < 75 && (rt == 0 || rt >= FIRST_TOOLKIT_WITHOUT_BELOW_75)) {
        char last[16];
        setf(buf, size, "build with a CUDA 12 toolkit (CUDA 13 builds nothing below sm_75; %s is "
             "the last that builds sm_%d) and CMAKE_CUDA_ARCHITECTURES including %d-real%s",
             bpcu_format_version(LAST_TOOLKIT_BELOW_75, last, sizeof last), xy, xy, ptx_s);
    } else if (rt > 0 && rt < min) {
        setf(buf, size, "rebuild with CUDA %s or newer (sm_%d needs it; this build used %s) and "
             "CMAKE_CUDA_ARCHITECTURES including %d-real%s", need, xy, used, xy, ptx_s);
    } else {
        setf(buf, size, "rebuild with CMAKE_CUDA_ARCHITECTURES including %d-real%s (sm_%d needs "
             "CUDA %s or newer)", xy, ptx_s, xy, need);
    }
}

/* Why no image fits: the most telling of the reasons, into buf. */
static void explain_no_image(const bpcu_cc_input *in, const char *lists, char *buf, size_t size)
{
    int maj = in->cc_major, min = in->cc_minor;
    bool any = false, older = true;
    const bpcu_arch_list *ls[2] = {in->sass, in->ptx};
    for (int k = 0; k < 2; k++)
        for (int i = 0; ls[k] && i < ls[k]->count; i++) {
            any = true;
            if (cc_cmp(maj, min, ls[k]->arch[i].major, ls[k]->arch[i].minor) >= 0)
                older = false;
        }
    if (!any) {
        setf(buf, size, "this build has no kernel images at all (%s)", lists);
        return;
    }
    if (older) {
        setf(buf, size, "compute capability %d.%d is older than every image in this build (%s)",
             maj, min, lists);
        return;
    }
    /* an `a` image of the same major but another minor? */
    for (int i = 0; in->sass && i < in->sass->count; i++) {
        const bpcu_arch *a = &in->sass->arch[i];
        if (a->suffix == BPCU_ARCH_A && a->major == maj && a->minor != min) {
            char n[16];
            arch_name(a, "sm_", n, sizeof n);
            setf(buf, size,
                 "no image in this build runs on %d.%d (%s): %s runs only on exactly %d.%d",
                 maj, min, lists, n, a->major, a->minor);
            return;
        }
    }
    bool newer_major = true;
    for (int i = 0; in->sass && i < in->sass->count; i++)
        if (in->sass->arch[i].major >= maj)
            newer_major = false;
    if (newer_major)
        setf(buf, size,
             "no image in this build runs on %d.%d (%s): real code runs only within its own "
             "major version and there is no PTX that %d.%d can JIT-compile",
             maj, min, lists, maj, min);
    else
        setf(buf, size, "no image in this build runs on %d.%d (%s)", maj, min, lists);
}

/* The images of l that a toolkit of version rt can make (all when rt or an
 * architecture's first toolkit is unknown), into ok; the first image left
 * out that would run on the device, named into dropped ("" if none). */
static void buildable(const bpcu_arch_list *l, int rt, const char *prefix, int maj, int min,
                      bool (*runs)(const bpcu_arch *, int, int), bpcu_arch_list *ok,
                      char *dropped, size_t size)
{
    ok->count = 0;
    for (int i = 0; l && i < l->count; i++) {
        const bpcu_arch *a = &l->arch[i];
        int need = arch_min_toolkit(a->major * 10 + a->minor);
        if (rt > 0 && need > rt) {
            if (!dropped[0] && runs(a, maj, min))
                arch_name(a, prefix, dropped, size);
            continue;
        }
        ok->arch[ok->count++] = *a;
    }
}

/* Decide on the images the toolkit can have made: a list that claims sm_120
 * from CUDA 12.6 describes no real build (sm_120 needs 12.8), and the
 * device must not be called native on its strength. */
static bpcu_verdict decide(const bpcu_cc_input *in, bpcu_decision *out);

bpcu_verdict bpcu_cc_decide(const bpcu_cc_input *in, bpcu_decision *out)
{
    bpcu_arch_list sass, ptx;
    char dropped[24] = "";
    int maj = in->cc_major, min = in->cc_minor;
    buildable(in->sass, in->runtime_version, "sm_", maj, min, sass_runs, &sass, dropped,
              sizeof dropped);
    buildable(in->ptx, in->runtime_version, "compute_", maj, min, ptx_runs, &ptx, dropped,
              sizeof dropped);
    bpcu_cc_input real = *in;
    real.sass = &sass;
    real.ptx = &ptx;
    bpcu_verdict v = decide(&real, out);
    bpcu_decision claimed;
    if (dropped[0] && v == BPCU_UNSUPPORTED && decide(in, &claimed) != BPCU_UNSUPPORTED) {
        /* only the image that cannot exist would have run: say so */
        char rt[16], need[16], sass_s[160], ptx_s[160];
        const char *digits = dropped + strcspn(dropped, "0123456789");
        bpcu_format_version(in->runtime_version, rt, sizeof rt);
        bpcu_format_version(arch_min_toolkit(atoi(digits)), need, sizeof need);
        bpcu_format_arch_list(in->sass, sass_s, sizeof sass_s);
        bpcu_format_arch_list(in->ptx, ptx_s, sizeof ptx_s);
        setf(out->reason, sizeof out->reason,
             "%s needs CUDA %s or newer, so a build made with CUDA %s cannot contain it, and no "
             "other image of the lists runs on %d.%d (real code: %s; PTX: %s)", dropped, need, rt,
             maj, min, sass_s, ptx_s);
    }
    return v;
}

static bpcu_verdict decide(const bpcu_cc_input *in, bpcu_decision *out)
{
    int maj = in->cc_major, min = in->cc_minor, xy = maj * 10 + min;
    char sass_s[160], ptx_s[160], lists[360], drv_s[16], rt_s[16];
    bpcu_format_arch_list(in->sass, sass_s, sizeof sass_s);
    bpcu_format_arch_list(in->ptx, ptx_s, sizeof ptx_s);
    snprintf(lists, sizeof lists, "real code: %s; PTX: %s", sass_s, ptx_s);
    bpcu_format_version(in->driver_version, drv_s, sizeof drv_s);
    bpcu_format_version(in->runtime_version, rt_s, sizeof rt_s);
    memset(out, 0, sizeof *out);
    out->verdict = BPCU_UNSUPPORTED;

    if (cc_listed(in->deny, maj, min)) {
        setf(out->reason, sizeof out->reason,
             "compute capability %d.%d is denied by config (deny_cc)", maj, min);
        setf(out->remedy, sizeof out->remedy,
             "remove %d.%d from deny_cc in [backend.cuda], or choose another backend", maj, min);
        return out->verdict;
    }
    if (in->driver_version <= 0) {
        setf(out->reason, sizeof out->reason, "no CUDA driver found");
        char want[128];
        driver_for(in->runtime_version, want, sizeof want);
        if (in->runtime_version > 0)
            setf(out->remedy, sizeof out->remedy, "install an NVIDIA driver that %s, or choose "
                 "another backend", want);
        else
            setf(out->remedy, sizeof out->remedy,
                 "install the NVIDIA driver, or choose another backend");
        return out->verdict;
    }
    if (in->runtime_version > 0 && in->driver_version / 1000 < in->runtime_version / 1000) {
        setf(out->reason, sizeof out->reason,
             "the driver supports CUDA %s but this build's runtime is CUDA %s: a driver whose "
             "major version is older than the runtime's cannot run anything", drv_s, rt_s);
        /* a build this driver runs: a toolkit from sm_XY's first up to the driver's */
        int lo = arch_min_toolkit(xy), hi = in->driver_version;
        if (xy < 75 && hi > LAST_TOOLKIT_BELOW_75)
            hi = LAST_TOOLKIT_BELOW_75;
        char lo_s[16], hi_s[16], alt[256] = "", upd[160];
        bpcu_format_version(lo, lo_s, sizeof lo_s);
        bpcu_format_version(hi, hi_s, sizeof hi_s);
        if (lo == 0)
            setf(alt, sizeof alt, "build with a CUDA toolkit no newer than %s that builds sm_%d "
                 "and CMAKE_CUDA_ARCHITECTURES including %d-real", hi_s, xy, xy);
        else if (lo == hi)
            setf(alt, sizeof alt, "build with CUDA %s and CMAKE_CUDA_ARCHITECTURES including "
                 "%d-real", lo_s, xy);
        else if (lo < hi)
            setf(alt, sizeof alt, "build with a CUDA toolkit from %s to %s and "
                 "CMAKE_CUDA_ARCHITECTURES including %d-real", lo_s, hi_s, xy);
        char want[128];
        driver_for(in->runtime_version, want, sizeof want);
        setf(upd, sizeof upd, "update the NVIDIA driver to one that %s", want);
        /* a newer driver alone helps only if an image of this build fits */
        bool fits = best(in->sass, maj, min, sass_runs) ||
                    (in->allow_ptx_jit && best(in->ptx, maj, min, ptx_runs));
        if (fits)
            setf(out->remedy, sizeof out->remedy, "%s, %s%sor choose another backend", upd, alt,
                 alt[0] ? ", " : "");
        else if (alt[0])
            setf(out->remedy, sizeof out->remedy, "%s, or choose another backend", alt);
        else {
            bpcu_cc_input any_driver = *in;
            any_driver.driver_version = 0;
            char rb[256];
            rebuild_advice(&any_driver, xy, false, rb, sizeof rb);
            setf(out->remedy, sizeof out->remedy, "update the NVIDIA driver, then %s, or choose "
                 "another backend", rb);
        }
        return out->verdict;
    }

    const bpcu_arch *s = best(in->sass, maj, min, sass_runs);
    if (s) {
        char n[16];
        arch_name(s, "sm_", n, sizeof n);
        out->verdict = BPCU_NATIVE;
        snprintf(out->image, sizeof out->image, "%s", n);
        if (s->major == maj && s->minor == min)
            setf(out->reason, sizeof out->reason, "real code %s in this build matches %d.%d", n,
                 maj, min);
        else
            setf(out->reason, sizeof out->reason,
                 "real code %s in this build runs on %d.%d (same major, newer minor)", n, maj, min);
        return out->verdict;
    }

    const bpcu_arch *p = best(in->ptx, maj, min, ptx_runs);
    if (p) {
        char n[20];
        arch_name(p, "compute_", n, sizeof n);
        if (!in->allow_ptx_jit) {
            setf(out->reason, sizeof out->reason,
                 "no real code for %d.%d in this build (%s); only PTX %s fits and PTX-JIT is "
                 "disabled by config (allow_ptx_jit = false)", maj, min, lists, n);
            char rb[256];
            rebuild_advice(in, xy, false, rb, sizeof rb);
            setf(out->remedy, sizeof out->remedy, "set allow_ptx_jit = true in [backend.cuda], or %s",
                 rb);
            return out->verdict;
        }
        if (in->runtime_version > 0 && in->driver_version < in->runtime_version) {
            setf(out->reason, sizeof out->reason,
                 "no real code for %d.%d in this build (%s); its PTX %s was made by CUDA %s, "
                 "newer than the CUDA %s the driver supports, so the driver cannot JIT-compile it",
                 maj, min, lists, n, rt_s, drv_s);
            char rb[256], want[128];
            rebuild_advice(in, xy, false, rb, sizeof rb);
            driver_for(in->runtime_version, want, sizeof want);
            setf(out->remedy, sizeof out->remedy, "update the NVIDIA driver to one that %s, or %s",
                 want, rb);
            return out->verdict;
        }
        out->verdict = BPCU_JIT;
        snprintf(out->image, sizeof out->image, "%s", n);
        setf(out->reason, sizeof out->reason,
             "no real code for %d.%d in this build (%s); the driver JIT-compiles PTX %s at first "
             "use (slower start)", maj, min, lists, n);
        char rb[256];
        rebuild_advice(in, xy, false, rb, sizeof rb);
        setf(out->remedy, sizeof out->remedy, "%s, for native code", rb);
        return out->verdict;
    }

    char why[360];
    explain_no_image(in, lists, why, sizeof why);
    char rb[256];
    rebuild_advice(in, xy, true, rb, sizeof rb);
    setf(out->remedy, sizeof out->remedy, "%s, or choose another backend", rb);
    if (cc_listed(in->allow, maj, min)) {
        out->verdict = BPCU_FORCED;
        setf(out->reason, sizeof out->reason,
             "warning: forced by config (allow_cc lists %d.%d) although %s; kernels may fail with "
             "'no kernel image is available'", maj, min, why);
        return out->verdict;
    }
    snprintf(out->reason, sizeof out->reason, "%s", why);
    return out->verdict;
}

/* ---- parsers ------------------------------------------------------------- */

/* The next comma-separated entry of *s, trimmed, into tok; false at the end. */
static bool next_entry(const char **s, char *tok, size_t size, bool *too_long)
{
    const char *p = *s;
    if (!*p)
        return false;
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    *s = end ? end + 1 : p + len;
    while (len && isspace((unsigned char)*p))
        p++, len--;
    while (len && isspace((unsigned char)p[len - 1]))
        len--;
    *too_long = len >= size;
    if (*too_long)
        len = size - 1;
    memcpy(tok, p, len);
    tok[len] = '\0';
    return true;
}

static bool blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

static bool fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t size, const char *fmt, ...)
{
    if (err && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, size, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool parse_arch(const char *t, bpcu_arch *a)
{
    size_t n = 0;
    while (isdigit((unsigned char)t[n]))
        n++;
    if (n < 2 || n > 3 || t[0] == '0')
        return false;
    int v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (t[i] - '0');
    a->major = v / 10;
    a->minor = v % 10;
    a->suffix = BPCU_ARCH_PLAIN;
    if (t[n] == 'a' && t[n + 1] == '\0')
        a->suffix = BPCU_ARCH_A;
    else if (t[n] == 'f' && t[n + 1] == '\0')
        a->suffix = BPCU_ARCH_F;
    else if (t[n] != '\0')
        return false;
    return true;
}

bool bpcu_parse_arch_list(const char *s, bpcu_arch_list *out, char *err, size_t err_size)
{
    out->count = 0;
    if (!s || blank(s))
        return true;
    const char *p = s;
    char tok[32];
    bool too_long;
    while (next_entry(&p, tok, sizeof tok, &too_long)) {
        if (tok[0] == '\0')
            return fail(err, err_size, "empty entry in architecture list \"%s\"", s);
        if (too_long || !parse_arch(tok, &out->arch[out->count < BPCU_CC_MAX ? out->count : 0]))
            return fail(err, err_size,
                        "bad architecture '%s' in \"%s\": expected a number as in sm_XY with an "
                        "optional a or f suffix, e.g. 80, 90a, 100f, 120", tok, s);
        if (out->count == BPCU_CC_MAX)
            return fail(err, err_size, "too many architectures in \"%s\" (at most %d)", s,
                        BPCU_CC_MAX);
        out->count++;
        if (*p == '\0' && p > s && p[-1] == ',')
            return fail(err, err_size, "empty entry in architecture list \"%s\"", s);
    }
    return true;
}

bool bpcu_parse_cc(const char *s, bpcu_cc *out, char *err, size_t err_size)
{
    const char *p = s ? s : "";
    while (isspace((unsigned char)*p))
        p++;
    int maj = 0, min = 0;
    size_t nd = 0;
    while (isdigit((unsigned char)p[nd]) && nd < 3)
        maj = maj * 10 + (p[nd] - '0'), nd++;
    bool ok = nd > 0 && maj > 0 && p[nd] == '.' && isdigit((unsigned char)p[nd + 1]);
    if (ok) {
        min = p[nd + 1] - '0';
        const char *q = p + nd + 2;
        while (isspace((unsigned char)*q))
            q++;
        ok = *q == '\0';
    }
    if (!ok)
        return fail(err, err_size,
                    "bad compute capability '%s': expected MAJOR.MINOR such as 8.6 or 12.0", s ? s : "");
    out->major = maj;
    out->minor = min;
    return true;
}

bool bpcu_parse_cc_list(const char *s, bpcu_cc_list *out, char *err, size_t err_size)
{
    out->count = 0;
    if (!s || blank(s))
        return true;
    /* commas or blanks separate entries */
    const char *p = s;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        char tok[32];
        size_t len = 0;
        while (p[len] && p[len] != ',' && !isspace((unsigned char)p[len]))
            len++;
        if (len >= sizeof tok)
            return fail(err, err_size, "bad compute capability in \"%s\": entry too long", s);
        memcpy(tok, p, len);
        tok[len] = '\0';
        p += len;
        if (out->count == BPCU_CC_MAX)
            return fail(err, err_size, "too many compute capabilities in \"%s\" (at most %d)", s,
                        BPCU_CC_MAX);
        char e[160];
        if (!bpcu_parse_cc(tok, &out->cc[out->count], e, sizeof e))
            return fail(err, err_size, "%s in \"%s\"", e, s);
        out->count++;
    }
    return true;
}

bool bpcu_parse_arch_list_any(const char *s, bpcu_arch_list *out, char *err, size_t err_size)
{
    char buf[512];
    size_t n = 0;
    if (!s)
        s = "";
    if (strlen(s) >= sizeof buf)
        return fail(err, err_size, "architecture list \"%.40s...\" is too long", s);
    /* copy entry by entry, dropping sm_ / compute_ and -real / -virtual */
    for (const char *p = s; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && isspace((unsigned char)*p))
            p++, len--;
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        if (len > 3 && strncmp(p, "sm_", 3) == 0)
            p += 3, len -= 3;
        else if (len > 8 && strncmp(p, "compute_", 8) == 0)
            p += 8, len -= 8;
        if (len > 5 && strncmp(p + len - 5, "-real", 5) == 0)
            len -= 5;
        else if (len > 8 && strncmp(p + len - 8, "-virtual", 8) == 0)
            len -= 8;
        memcpy(buf + n, p, len);
        n += len;
        if (end)
            buf[n++] = ',';
        p = end ? end + 1 : p + len;
        if (!end)
            break;
    }
    buf[n] = '\0';
    char e[256];
    if (!bpcu_parse_arch_list(buf, out, e, sizeof e))
        return fail(err, err_size, "%s (accepted spellings: 120, sm_120, compute_120, 120-real, "
                    "120-virtual, 120a, 100f)", e);
    return true;
}

bool bpcu_parse_cuda_version(const char *s, int *out, char *err, size_t err_size)
{
    const char *p = s ? s : "";
    if (strcmp(p, "none") == 0 || strcmp(p, "0") == 0) {
        *out = 0;
        return true;
    }
    int major = 0, minor = 0;
    size_t nd = 0;
    while (isdigit((unsigned char)p[nd]) && nd < 7)
        major = major * 10 + (p[nd] - '0'), nd++;
    if (nd > 0 && p[nd] == '\0' && major >= 1000 && major <= 999999) {
        *out = major; /* CUDA's integer */
        return true;
    }
    if (nd > 0 && nd <= 2 && major >= 1 && p[nd] == '.' && isdigit((unsigned char)p[nd + 1])) {
        size_t k = nd + 1;
        while (isdigit((unsigned char)p[k]) && k < nd + 3)
            minor = minor * 10 + (p[k] - '0'), k++;
        if (p[k] == '\0' && minor <= 99) {
            *out = major * 1000 + minor * 10;
            return true;
        }
    }
    if (nd == 3 && (p[nd] == '.' || p[nd] == '\0'))
        return fail(err, err_size, "'%s' looks like a driver release, not a CUDA version: give "
                    "the CUDA version of a toolkit as nvcc --version prints it (e.g. 12.8) or "
                    "CUDA's integer (12080)", p);
    return fail(err, err_size, "'%s' is not a CUDA version: expected MAJOR.MINOR as nvidia-smi "
                "prints it (13.0, 12.8), CUDA's integer (13000), or 0 for no driver", p);
}

/* "575.57.08", "575.57" or "575" into r, the number of parts given into
 * *parts; false if it is none of those. */
static bool parse_release(const char *s, int r[3], int *parts)
{
    const char *p = s;
    r[0] = r[1] = r[2] = 0;
    for (int i = 0; i < 3; i++) {
        int v = 0, nd = 0;
        while (isdigit((unsigned char)*p) && nd < 4)
            v = v * 10 + (*p++ - '0'), nd++;
        if (nd == 0 || (i == 0 && nd != 3))
            return false;
        r[i] = v;
        *parts = i + 1;
        if (*p == '\0')
            return true;
        if (*p++ != '.')
            return false;
    }
    return false;
}

/* release_cmp on the first `parts` numbers: "575" is the whole 575 branch. */
static int release_cmp_parts(const int a[3], const int b[3], int parts)
{
    for (int i = 0; i < parts; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

bool bpcu_parse_driver(const char *s, int *cuda, char *note, size_t note_size, char *err,
                       size_t err_size)
{
    if (note && note_size)
        note[0] = '\0';
    int r[3], parts = 0;
    if (!s || !parse_release(s, r, &parts))
        return bpcu_parse_cuda_version(s, cuda, err, err_size);
    char first[24], v[16];
    release_text(driver_table[0].release, first, sizeof first);
    if (release_cmp_parts(r, driver_table[0].release, parts) < 0)
        return fail(err, err_size, "driver release %s is older than %s, the first to support "
                    "CUDA 10.0: too old for anything backplane builds; update the NVIDIA driver",
                    s, first);
    size_t k = 0;
    while (k + 1 < DRIVER_ROWS && release_cmp_parts(r, driver_table[k + 1].release, parts) >= 0)
        k++;
    *cuda = driver_table[k].cuda;
    bpcu_format_version(*cuda, v, sizeof v);
    bool beyond = k + 1 == DRIVER_ROWS && r[0] > driver_table[k].release[0];
    if (note && note_size)
        snprintf(note, note_size, beyond ? "driver release %s supports CUDA %s at least (it is "
                 "newer than every release this check knows)" : "driver release %s supports "
                 "CUDA %s", s, v);
    return true;
}
