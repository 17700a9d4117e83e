/* devsim's queue: one worker thread runs items in order. A wait blocks
 * until the item it needs is done; in hold mode nothing runs before a wait,
 * and a wait lets run only the items up to the one it needs. */
#include <stdlib.h>

#include "devsim.h"

static void *worker(void *arg)
{
    ds_dev *d = arg;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (!d->stopping && (!d->head || d->head->seq > d->released))
            pthread_cond_wait(&d->work, &d->lock);
        if (!d->head && d->stopping)
            break;
        if (!d->head || d->head->seq > d->released) { /* stopping with held work: run it */
            d->released = d->next_seq;
            continue;
        }
        ds_item *it = d->head;
        d->head = it->next;
        if (!d->head)
            d->tail = NULL;
        pthread_mutex_unlock(&d->lock);
        ds_run(d, it);
        uint64_t seq = it->seq;
        free(it->data);
        free(it);
        pthread_mutex_lock(&d->lock);
        d->completed = seq;
        pthread_cond_broadcast(&d->done);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

bp_status ds_queue_start(ds_dev *d)
{
    if (pthread_mutex_init(&d->lock, NULL) != 0)
        return BP_ERR_OUT_OF_MEMORY;
    if (pthread_cond_init(&d->work, NULL) != 0) {
        pthread_mutex_destroy(&d->lock);
        return BP_ERR_OUT_OF_MEMORY;
    }
    if (pthread_cond_init(&d->done, NULL) != 0) {
        pthread_cond_destroy(&d->work);
        pthread_mutex_destroy(&d->lock);
        return BP_ERR_OUT_OF_MEMORY;
    }
    d->released = d->hold ? 0 : UINT64_MAX;
    if (pthread_create(&d->worker, NULL, worker, d) != 0) {
        pthread_cond_destroy(&d->done);
        pthread_cond_destroy(&d->work);
        pthread_mutex_destroy(&d->lock);
        return BP_ERR_BACKEND;
    }
    return BP_OK;
}

void ds_queue_stop(ds_dev *d)
{
    pthread_mutex_lock(&d->lock);
    d->stopping = true;
    pthread_cond_signal(&d->work);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->worker, NULL);
    pthread_cond_destroy(&d->done);
    pthread_cond_destroy(&d->work);
    pthread_mutex_destroy(&d->lock);
}

void ds_enqueue(ds_dev *d, ds_item *item, int n_out, ds_buf *const *outs)
{
    pthread_mutex_lock(&d->lock);
    item->seq = ++d->next_seq;
    item->next = NULL;
    for (int k = 0; k < n_out; k++)
        atomic_store(&outs[k]->last_write, item->seq);
    if (d->tail)
        d->tail->next = item;
    else
        d->head = item;
    d->tail = item;
    pthread_cond_signal(&d->work);
    pthread_mutex_unlock(&d->lock);
}

void ds_wait_for(ds_dev *d, uint64_t seq)
{
    pthread_mutex_lock(&d->lock);
    if (d->released < seq) { /* hold mode: let run only what this wait needs */
        d->released = seq;
        pthread_cond_signal(&d->work);
    }
    while (d->completed < seq)
        pthread_cond_wait(&d->done, &d->lock);
    pthread_mutex_unlock(&d->lock);
}

void ds_wait_all(ds_dev *d)
{
    pthread_mutex_lock(&d->lock);
    uint64_t last = d->next_seq;
    pthread_mutex_unlock(&d->lock);
    ds_wait_for(d, last);
}
