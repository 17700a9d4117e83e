/* The cuda backend's compute-capability check: a pure function (no CUDA
 * headers, no I/O) that decides whether this build's kernel images can run on
 * one device, and says why not and what to do. Shared by the plugin (at open)
 * and by `backplane cuda-check` (static library bp_cuda_cc), and tested
 * table-driven on machines without a GPU (tests/test_cuda_cc.c).
 *
 * Rules (DESIGN.md, "Compute capability"):
 *   - real code (SASS) sm_XY runs on X.Z with Z >= Y (same major);
 *   - sm_XYa runs only on exactly X.Y; sm_XYf on X.Z with Z >= Y;
 *   - plain PTX compute_XY is JIT-compiled for any CC >= X.Y, if the driver is
 *     at least as new as the toolkit that made the PTX (the runtime version);
 *     compute_XYa / compute_XYf PTX follow the a / f rules above;
 *   - a driver whose major version is older than the runtime's runs nothing;
 *   - no driver: nothing runs ("no CUDA driver found").
 * Config on top: deny_cc wins over everything; allow_cc turns an
 * architecture refusal (no image fits) into FORCED, with a warning;
 * allow_ptx_jit = false refuses what only PTX could run. */
#ifndef BPCU_CC_CHECK_H
#define BPCU_CC_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BPCU_CC_MAX 32 /* entries in one list */

typedef enum bpcu_arch_suffix {
    BPCU_ARCH_PLAIN = 0, /* sm_XY / compute_XY */
    BPCU_ARCH_A = 1,     /* sm_XYa: exactly X.Y */
    BPCU_ARCH_F = 2      /* sm_XYf: the family X.Z, Z >= Y */
} bpcu_arch_suffix;

/* One architecture as in sm_XY: "90a" is {9, 0, A}, "120" is {12, 0, PLAIN}. */
typedef struct bpcu_arch {
    int major, minor;
    bpcu_arch_suffix suffix;
} bpcu_arch;

typedef struct bpcu_arch_list {
    int count;
    bpcu_arch arch[BPCU_CC_MAX];
} bpcu_arch_list;

/* A compute capability, as in allow_cc / deny_cc ("8.6"). */
typedef struct bpcu_cc {
    int major, minor;
} bpcu_cc;

typedef struct bpcu_cc_list {
    int count;
    bpcu_cc cc[BPCU_CC_MAX];
} bpcu_cc_list;

typedef enum bpcu_verdict {
    BPCU_NATIVE = 0,     /* real code for this device is in the build */
    BPCU_JIT = 1,        /* only PTX fits: the driver JIT-compiles it (a warning) */
    BPCU_FORCED = 2,     /* nothing fits, but allow_cc lists it: tried anyway (a warning) */
    BPCU_UNSUPPORTED = 3 /* refused: see reason and remedy */
} bpcu_verdict;

typedef struct bpcu_cc_input {
    int cc_major, cc_minor;      /* the device's compute capability */
    int driver_version;          /* CUDA's integer (13000 = 13.0); 0 = no driver */
    int runtime_version;         /* the toolkit that built the images (13000) */
    const bpcu_arch_list *sass;  /* real-code images (may be NULL: none) */
    const bpcu_arch_list *ptx;   /* PTX images (may be NULL: none) */
    bool allow_ptx_jit;
    const bpcu_cc_list *allow;   /* (optional) allow_cc */
    const bpcu_cc_list *deny;    /* (optional) deny_cc */
} bpcu_cc_input;

typedef struct bpcu_decision {
    bpcu_verdict verdict;
    char image[24];              /* the image that runs: "sm_90", "compute_120"; "" if none */
    char reason[384];            /* why, one sentence, no newline */
    char remedy[384];            /* what to do; "" when nothing is needed */
} bpcu_decision;

/* Decide for one device. Always fills *out (never fails); returns the verdict. */
bpcu_verdict bpcu_cc_decide(const bpcu_cc_input *in, bpcu_decision *out);

/* "native", "jit", "forced", "unsupported". */
const char *bpcu_verdict_name(bpcu_verdict v);

/* True when a device with this verdict may be used. */
static inline bool bpcu_verdict_runs(bpcu_verdict v) { return v != BPCU_UNSUPPORTED; }

/* Parse "80,90a,100f,120" (as in sm_XY; spaces around commas allowed; an
 * empty or blank string is the empty list). On error returns false and writes
 * a message naming the bad entry into err. */
bool bpcu_parse_arch_list(const char *s, bpcu_arch_list *out, char *err, size_t err_size);

/* As bpcu_parse_arch_list, also accepting the spellings of the toolchain and
 * of CMake for each entry: sm_120, compute_120, 120-real, 120-virtual, 120a
 * (the prefix or the -real / -virtual suffix is dropped: the caller says
 * which list it is). */
bool bpcu_parse_arch_list_any(const char *s, bpcu_arch_list *out, char *err, size_t err_size);

/* Parse a CUDA version: CUDA's integer (13000), or MAJOR.MINOR as nvidia-smi
 * prints it ("CUDA Version: 12.8" -> 12080); "0" or "none" is no driver (0).
 * A driver release ("575.57.08") is refused: bpcu_parse_driver takes those. */
bool bpcu_parse_cuda_version(const char *s, int *out, char *err, size_t err_size);

/* Parse what describes a driver: the CUDA version it supports, as
 * bpcu_parse_cuda_version reads it (nvidia-smi's "CUDA Version: 12.9": 12.9;
 * 12090; 0 or "none" for no driver), or its own release as nvidia-smi's
 * "Driver Version" shows it ("575.57.08", also "575.57" or "575"), which
 * becomes the CUDA version that release supports. note (may be NULL) gets
 * "driver release 575.57.08 supports CUDA 12.9" for a release, "" otherwise. */
bool bpcu_parse_driver(const char *s, int *cuda, char *note, size_t note_size, char *err,
                       size_t err_size);

/* The first Linux driver release that supports CUDA version `cuda` (CUDA's
 * integer) as "580.65.06" into buf, or NULL when the table ends before it. */
const char *bpcu_driver_min_release(int cuda, char *buf, size_t size);

/* Parse one compute capability "12.0" (also "12", meaning 12.0). */
bool bpcu_parse_cc(const char *s, bpcu_cc *out, char *err, size_t err_size);

/* Parse "12.0, 8.6" (comma or space separated; empty is the empty list). */
bool bpcu_parse_cc_list(const char *s, bpcu_cc_list *out, char *err, size_t err_size);

/* Write a list back as "80,90a,120" ("none" when empty). Returns buf. */
const char *bpcu_format_arch_list(const bpcu_arch_list *l, char *buf, size_t size);

/* "13.0" for 13000; "none" for 0. Returns buf. */
const char *bpcu_format_version(int version, char *buf, size_t size);

/* What this build recorded at configure time (CMAKE_CUDA_ARCHITECTURES and
 * CUDAToolkit_VERSION): the real-code and PTX lists as "80,90,120" strings,
 * the CMake entries, comma-separated ("80-real,90-real,120"), and the toolkit version as
 * CUDA's integer. Empty strings and 0 when the cuda plugin is not built. */
const char *bpcu_build_sass(void);
const char *bpcu_build_ptx(void);
const char *bpcu_build_cmake_archs(void);
int bpcu_build_runtime_version(void);

#ifdef __cplusplus
}
#endif
#endif
