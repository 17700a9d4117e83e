/* The report a person reads: one line per FAIL / CRASH / TIMEOUT, a summary
 * by op, and the totals line. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum { MAX_OPS = 192 };

const char *cf_status_name(cf_status s)
{
    switch (s) {
    case CF_PASS: return "PASS";
    case CF_FAIL: return "FAIL";
    case CF_UNSUPPORTED: return "UNSUPPORTED";
    case CF_CRASH: return "CRASH";
    case CF_TIMEOUT: return "TIMEOUT";
    }
    return "?";
}

bool cf_totals(const cf_run *run, size_t *pass, size_t *fail, size_t *unsup, size_t *crash)
{
    *pass = *fail = *unsup = *crash = 0;
    for (size_t i = 0; i < run->n_results; i++) {
        switch (run->results[i].status) {
        case CF_PASS: (*pass)++; break;
        case CF_FAIL: (*fail)++; break;
        case CF_UNSUPPORTED: (*unsup)++; break;
        case CF_CRASH: case CF_TIMEOUT: (*crash)++; break;
        }
    }
    return *fail == 0 && *crash == 0;
}

typedef struct op_count {
    const char *op;
    size_t n[5];
} op_count;

void cf_print_report(FILE *f, const cf_run *run)
{
    for (size_t i = 0; i < run->n_results; i++) {
        const cf_result *r = &run->results[i];
        if (r->status == CF_FAIL || r->status == CF_CRASH || r->status == CF_TIMEOUT)
            fprintf(f, "%-7s %s %s %s: %s\n", cf_status_name(r->status), r->op, r->dtype, r->shape,
                    r->message);
    }
    op_count ops[MAX_OPS];
    size_t n_ops = 0;
    for (size_t i = 0; i < run->n_results; i++) {
        const cf_result *r = &run->results[i];
        size_t k = 0;
        while (k < n_ops && strcmp(ops[k].op, r->op) != 0)
            k++;
        if (k == n_ops) {
            if (n_ops == MAX_OPS)
                continue;
            memset(&ops[n_ops], 0, sizeof ops[n_ops]);
            ops[n_ops++].op = r->op;
        }
        ops[k].n[r->status]++;
    }
    fprintf(f, "\nbackend %s (plugin version %s), by op:\n", run->backend_name,
            run->plugin_version[0] ? run->plugin_version : "?");
    int w = 20; /* the op column fits the longest name (softmax_cross_entropy_loss) */
    for (size_t k = 0; k < n_ops; k++)
        if ((int)strlen(ops[k].op) > w)
            w = (int)strlen(ops[k].op);
    fprintf(f, "  %-*s %7s %7s %12s %8s\n", w, "op", "passed", "failed", "unsupported", "crashed");
    for (size_t k = 0; k < n_ops; k++)
        fprintf(f, "  %-*s %7zu %7zu %12zu %8zu\n", w, ops[k].op, ops[k].n[CF_PASS],
                ops[k].n[CF_FAIL], ops[k].n[CF_UNSUPPORTED],
                ops[k].n[CF_CRASH] + ops[k].n[CF_TIMEOUT]);
    size_t p, fl, u, c;
    cf_totals(run, &p, &fl, &u, &c);
    fprintf(f, "%zu passed, %zu failed, %zu unsupported, %zu crashed\n", p, fl, u, c);
}

