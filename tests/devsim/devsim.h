/* devsim: a device-like backend for the tests, running on the CPU.
 *
 * It behaves as a GPU backend must, so that CI (which has no GPU) exercises
 * what only a GPU backend would otherwise reach:
 *  - its memory is private: buffers are handles the core cannot read, so
 *    copies stage through host memory and every host read goes through read();
 *  - its ops are queued to a worker thread and return at once;
 *  - a read waits only for the queued work that produces the buffer it
 *    reads; synchronize waits for everything queued;
 *  - it computes with the binary backend's reference kernels;
 *  - it checks gather's indices itself, on the "device", and reports a bad
 *    one through deferred_error at the next wait (ABI 1.2); so too those of
 *    gather_elements, gather_nd and the scatters, and the losses' labels
 *    (ABI 1.4's op entry, whose ops it queues like the others).
 * With [backend.devsim] hold = true, queued work does not run at all until a
 * call waits for it, so a test can see that an op did not synchronise.
 * Not installed: tests/ builds it as bp_devsim.so. */
#ifndef BPT_DEVSIM_H
#define BPT_DEVSIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels.h"

/* A buffer: host memory only the worker and read/write touch. */
typedef struct ds_buf {
    unsigned char *mem;
    size_t bytes;
    _Atomic uint64_t last_write; /* seq of the last queued item writing it (0: none) */
} ds_buf;

typedef enum ds_kind {
    DS_UNARY, DS_BINARY, DS_WHERE, DS_REDUCE, DS_MATMUL, DS_COPY, DS_GATHER, DS_SOFTMAX,
    DS_FILL, DS_ARANGE, DS_RANDOM, DS_WRITE, DS_FREE, DS_OP
} ds_kind;

/* Views per item: the most any entry takes (op: batch_norm's 5 inputs and
 * 1 output, layer_norm's 3 inputs and 3 outputs). */
#define DS_MAX_VIEWS 6

/* One piece of queued work. Views hold ds_buf handles as their buffers. */
typedef struct ds_item {
    struct ds_item *next;
    uint64_t seq;
    ds_kind kind;
    bp_op op;
    int nv;
    bp_view v[DS_MAX_VIEWS]; /* inputs first, the output(s) last */
    int n_out;               /* DS_OP: outputs among the views (else 1) */
    unsigned absent;         /* DS_OP: bit k set when view k was NULL (an optional
                                input, or an output not wanted) */
    bp_op_params params;     /* DS_OP */
    int32_t arg;             /* n_reduce, or gather's axis */
    double d0, d1;           /* arange start/step, random p0/p1 */
    uint64_t u0, u1;         /* random seed/offset */
    unsigned char value[16]; /* fill's element */
    ds_buf *buf;             /* write, free */
    size_t offset, bytes;
    void *data;              /* write: the caller's bytes, copied */
} ds_item;

typedef struct ds_dev {
    bpk_dev base;            /* first: the kernels report through base.host */
    bp_host_api worker_host; /* what the kernels see on the worker thread */
    char worker_msg[512];    /* their last set_error there */
    const bp_host_api *host; /* the core's, for the calling threads */
    void *state;             /* the plugin's state, which points back here */
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    pthread_t worker;
    ds_item *head, *tail;
    uint64_t next_seq;       /* seq of the last item queued */
    uint64_t released;       /* items up to this seq may run (hold mode) */
    uint64_t completed;      /* seq of the last item finished */
    bool hold, stopping;
    bp_status err_status;    /* the deferred error, the first since the last take */
    char err[640];
    atomic_uint_fast64_t used;
} ds_dev;

/* queue.c */
bp_status ds_queue_start(ds_dev *d);
void ds_queue_stop(ds_dev *d);
/* Queue item (malloc'ed; the queue frees it); outs[0 .. n_out) are the
 * buffers the item writes. */
void ds_enqueue(ds_dev *d, ds_item *item, int n_out, ds_buf *const *outs);
/* Wait until the item `seq` (and so every earlier one) is done. */
void ds_wait_for(ds_dev *d, uint64_t seq);
void ds_wait_all(ds_dev *d);

/* run.c: execute one item on the worker thread. */
void ds_run(ds_dev *d, ds_item *item);

/* ops.c: the op entries (they queue and return) */
bp_status ds_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status ds_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out);
bp_status ds_where(void *dev, const bp_view *c, const bp_view *a, const bp_view *b,
                   const bp_view *out);
bp_status ds_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out);
bp_status ds_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);
bp_status ds_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out);
bp_status ds_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                    const bp_view *out);
bp_status ds_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status ds_fill(void *dev, const bp_view *out, const void *value);
bp_status ds_arange(void *dev, double start, double step, const bp_view *out);
bp_status ds_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                    const bp_view *out);
/* The op entry (plugin.h): every op since ABI 1.4 (its row's SINCE >= 4),
 * computed by the reference kernels, queued. */
bp_status ds_op_entry(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out);

#endif
