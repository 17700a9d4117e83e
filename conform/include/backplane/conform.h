/* libbackplane_conform: the conformance suite as a library.
 *
 * Runs every op x dtype case the suite knows (edge shapes, special values,
 * random data from the library's keyed generator) against one backend,
 * compares each result with a double-precision host oracle within the
 * tolerances of conform/tolerances.txt (embedded at build time), and
 * checks the plugin contract (descriptor, buffer round trips, supports()
 * answers, nothing written to stdout). `backplane conform` is a front end to
 * it; a plugin author can link it into a test runner of their own:
 *
 *     #include <backplane/conform.h>       // CMake: backplane::conform
 *                                          // or -lbackplane_conform -lbackplane
 *     bp_conform_options opt = {.struct_size = sizeof opt};
 *     bp_conform_results *res = NULL;
 *     bp_conform_totals t = {.struct_size = sizeof t};
 *     bp_status st = bp_conform_run("build/bp_mydev.so", &opt, &res);
 *     if (st == BP_ERR_UNSUPPORTED_DEVICE)       // no device here: a skip
 *         return 77;
 *     if (st != BP_OK) {
 *         fprintf(stderr, "%s\n", bp_conform_last_error());
 *         return 1;
 *     }
 *     bp_conform_print_report(res, stdout);     // FAIL/CRASH lines, summary, totals
 *     bp_conform_get_totals(res, &t);
 *     bp_conform_free(res);
 *     return t.failed || t.crashed;
 *
 * The process that calls bp_conform_run never creates a context or loads a
 * plugin: every case runs in a forked worker process, so a crash or a hang
 * is reported for its case and the rest still run (CUDA cannot survive a
 * fork, so the parent must stay clean). Guard bytes surround every tensor;
 * the workers' stdout is captured (a plugin must never write to it).
 *
 * Every function that can fail returns a bp_status and leaves a message for
 * bp_conform_last_error(). Nothing here writes to stdout unless given it;
 * progress goes to stderr only when asked for. */
#ifndef BACKPLANE_CONFORM_H
#define BACKPLANE_CONFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <backplane/status.h>

#if defined(BP_BUILDING_CONFORM) && defined(__GNUC__)
#define BP_CONFORM_API __attribute__((visibility("default")))
#else
#define BP_CONFORM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What to run and how. Zero-initialise it, then set struct_size: members the
 * library does not know of are never read, and members it knows but the
 * caller's struct lacks take their zero defaults, so members can be
 * appended without breaking callers built against an older header. */
typedef struct bp_conform_options {
    uint32_t struct_size;       /* set by the caller: sizeof(bp_conform_options) */
    const char *config;         /* ini file for the workers' contexts; NULL: the layered
                                   defaults (bp_context_create(NULL)) */
    const char *const *ops;     /* fnmatch globs on case names: "add", "log*", "contract.*" */
    size_t n_ops;               /* how many; 0 runs every case */
    double timeout_s;           /* per case, before it counts as TIMEOUT; <= 0: 10 seconds */
    const char *tolerances;     /* a tolerance file to use instead of the built-in table
                                   (the format of conform/tolerances.txt); NULL:
                                   the built-in one */
    bool progress;              /* progress on stderr while running: one line rewritten
                                   in place when stderr is a terminal, else a line per
                                   tenth of the cases */
    /* Members above are valid for version 1 of this struct. */
    bool graph;                 /* also record each case that passed on a graph
                                   (graph.h), compile and run it, and require
                                   eager's results bit for bit */
} bp_conform_options;
/* Members above are valid for version 2 of this struct. */

/* The results of one run (opaque). */
typedef struct bp_conform_results bp_conform_results;

/* Counts of one run. Set struct_size first (the rule of bp_conform_options;
 * the library writes only the members both sides know). */
typedef struct bp_conform_totals {
    uint32_t struct_size;       /* set by the caller: sizeof(bp_conform_totals) */
    size_t passed;
    size_t failed;
    size_t unsupported;         /* declined by supports(): not a failure */
    size_t crashed;             /* crashes and timeouts */
    const char *backend;        /* the backend that ran, "binary:0"; valid until
                                   bp_conform_free */
    const char *plugin_version; /* its plugin's version string ("" if none) */
} bp_conform_totals;
/* Members above are valid for version 1 of this struct. */

/* Run the selected cases against backend: a name ("binary", "cuda:1") or a
 * plugin file ("build/bp_mydev.so": anything containing '/' or ending in
 * .so), as bp_backend_get takes it. options may be NULL (every case, the
 * defaults). On BP_OK *out holds the results (free them with
 * bp_conform_free), however many cases failed. Errors, *out left NULL:
 *   BP_ERR_UNSUPPORTED_DEVICE  the backend's device is not available on this
 *                              machine (a skip, not a pass);
 *   another code               the backend could not be opened (the code
 *                              bp_context_create or bp_backend_get gave), or
 *                              BP_ERR_INVALID_ARGUMENT (bad options, or no
 *                              case matches options->ops), BP_ERR_IO (the
 *                              tolerance file; no worker process could be
 *                              started), BP_ERR_FORMAT (a malformed tolerance
 *                              file), BP_ERR_OUT_OF_MEMORY.
 * bp_conform_last_error() says which, and why. */
BP_CONFORM_API bp_status bp_conform_run(const char *backend, const bp_conform_options *options,
                                        bp_conform_results **out);

/* Load the tolerance table and select the cases exactly as bp_conform_run
 * would, without running anything. If f is given, write one line per
 * selected case ("NAME DTYPE SHAPE") and a last line "N cases" to it. The
 * count goes to *n_cases when n_cases is not NULL. Errors as bp_conform_run
 * (tolerances, options, memory); selecting no case is not an error here. */
BP_CONFORM_API bp_status bp_conform_list(const bp_conform_options *options, FILE *f,
                                         size_t *n_cases);

/* The counts and the backend's name. BP_ERR_INVALID_ARGUMENT for NULL
 * arguments or a struct_size too small to hold the counts. */
BP_CONFORM_API bp_status bp_conform_get_totals(const bp_conform_results *results,
                                               bp_conform_totals *out);

/* The report a person reads: one line per FAIL / CRASH / TIMEOUT (status,
 * op, dtype, shape, why), a summary by op, then the totals line
 * "N passed, N failed, N unsupported, N crashed". BP_ERR_IO if writing
 * fails. */
BP_CONFORM_API bp_status bp_conform_print_report(const bp_conform_results *results, FILE *f);

/* One JSON object per case, one per line (JSON Lines): backend,
 * plugin_version, op, dtype, shape, status, max_error, tolerance, message.
 * Overwrites path. BP_ERR_IO if it cannot be written. */
BP_CONFORM_API bp_status bp_conform_write_json(const bp_conform_results *results,
                                               const char *path);

/* The op x dtype matrix of this run, as Markdown. Overwrites path. */
BP_CONFORM_API bp_status bp_conform_write_matrix(const bp_conform_results *results,
                                                 const char *path);

/* The op x backend x dtype matrix (Markdown, as docs/conformance.md) from the
 * JSON-lines files of several runs (bp_conform_write_json), in the order
 * given. Lines that are not result objects are skipped. Overwrites path,
 * except for the sections other tools write below the matrix: from a line
 * beginning "<!-- kept by backplane conform" to the end, the file's old text
 * is kept (docs/conformance.md's ONNX node tests, tests/onnx/doc.py).
 * BP_ERR_IO when a file cannot be read or path cannot be written. */
BP_CONFORM_API bp_status bp_conform_merge_matrix(const char *const *json_paths, size_t n_paths,
                                                 const char *path);

/* Free results from bp_conform_run (NULL is a no-op). */
BP_CONFORM_API void bp_conform_free(bp_conform_results *results);

/* Why this thread's last failed bp_conform_* call failed: one line naming
 * what failed (the backend and its own reason, the file and line, ...).
 * "" if none failed yet. Valid until the next bp_conform_* call here. */
BP_CONFORM_API const char *bp_conform_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
