/* The store's observer of a run: each step written in one transaction
 * (store.c), with the step's slim snapshot (seed 003). A step that cannot
 * be written stops the run: on_step's error becomes the run's failure
 * ("the run's records could not be kept: the store's disk is full"). A
 * sub-agent's session is made on its first step, from the run's info. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal/rt_util.h"
#include "internal/store_impl.h"

struct aw_store_recorder {
    aw_store *store;
    aw_slim_config snapshot;
    char *fence;          /* the owner steps are written for, or NULL */
    char error[AW_ERROR_MESSAGE_MAX];
};

aw_store_recorder *aw_store_recorder_new(aw_store *s, const aw_slim_config *snapshot, aw_error *err)
{
    aw_store_recorder *rec = aw_malloc(s->alloc, sizeof *rec);
    if (!rec) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(rec, 0, sizeof *rec);
    rec->store = s;
    if (snapshot)
        rec->snapshot = *snapshot;
    else
        aw_slim_preset("standard", &rec->snapshot);
    return rec;
}

void aw_store_recorder_free(aw_store_recorder *rec)
{
    if (!rec)
        return;
    aw_free(rec->store->alloc, rec->fence);
    aw_free(rec->store->alloc, rec);
}

int aw_store_recorder_fence(aw_store_recorder *rec, const char *owner)
{
    char *copy = owner ? aw_rt_strdup(rec->store->alloc, owner) : NULL;
    if (owner && !copy)
        return AW_ENOMEM;
    aw_free(rec->store->alloc, rec->fence);
    rec->fence = copy;
    return 0;
}

const char *aw_store_recorder_error(const aw_store_recorder *rec) { return rec->error[0] ? rec->error : NULL; }

/* A run the store has not seen: a sub-agent (a top-level run's session is
 * begun by whoever starts it, with its configuration). */
static int begin_unknown(aw_store_recorder *rec, const aw_run_info *run, aw_error *err)
{
    char owner[300];
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(owner, sizeof owner, "%s:%ld", host, (long)getpid());
    aw_session_start st = {
        .id = run->session_id,
        .kind = "run",
        .parent_id = run->parent_session_id,
        .agent_name = run->agent_name,
        .owner = owner,
    };
    return aw_store_session_begin(rec->store, &st, err);
}

static int on_step(void *ctx, const aw_run_info *run, const aw_run_step *step, aw_error *err)
{
    aw_store_recorder *rec = ctx;
    aw_json_doc *snap = NULL;
    int rc = step->state ? aw_snapshot_slim(step->state, &rec->snapshot, rec->store->alloc, &snap, err) : 0;
    if (!rc) {
        const aw_json_value *snapshot = snap ? aw_json_doc_root(snap) : NULL;
        /* a sub-agent's session is begun here, by this process: fenced alike */
        rc = aw__store_append_step_fenced(rec->store, run->session_id, step, snapshot, step->stop_reason, rec->fence, err);
        if (rc == AW_STORE_ENOTFOUND) {
            rc = begin_unknown(rec, run, err);
            if (!rc)
                rc = aw__store_append_step_fenced(rec->store, run->session_id, step, snapshot, step->stop_reason, rec->fence, err);
        }
    }
    aw_json_doc_free(snap);
    if (rc) {
        char msg[AW_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s", err && err->message[0] ? err->message : aw_strerror(rc));
        if (!rec->error[0])
            snprintf(rec->error, sizeof rec->error, "%s", msg);
        aw_rt_error(err, rc, "the store could not keep turn %u: %s", step->turn, msg);
    }
    return rc;
}

aw_run_observer aw_store_recorder_observer(aw_store_recorder *rec)
{
    aw_run_observer o = {.ctx = rec, .on_step = on_step};
    return o;
}
