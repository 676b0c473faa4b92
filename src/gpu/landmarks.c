/* Landmark tables for A* from batched searches on the device (gpu.h).
 *
 * The work is 2k one-to-all trees: from every landmark on the forward graph
 * and towards it on the reverse one. It is cut into units, one direction and
 * a range of columns each, spread over the batch streams, which run at once:
 * a batch takes its stream's share of the device's blocks, so one batch alone
 * would leave the rest idle.
 *
 * Each unit's transpose writes its columns straight into two device tables
 * laid out as the host's (from[v * k + c]), which then come to the host in a
 * few large copies, into memory that the calling thread touched while the
 * searches ran. Without room for the device tables (3 GB on a USA-size graph
 * with 16 landmarks), each unit copies its columns out and merges them into
 * the host tables itself: on that graph the merges and the copies into fresh
 * memory took twice as long as the searches.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/team.h"
#include "gpu/gpu_internal.h"

/* Streams that share the landmark searches, at most. */
#define SS__LM_STREAMS 64

struct ss__lmjob {
        struct ss_gpu *gpu;
        const uint32_t *nodes;
        unsigned k;
        uint32_t *host[2]; /* from, to */
        uint32_t *dev[2];  /* the device tables, or NULL */
        unsigned streams;  /* batch streams in use: 0..streams-1 */
        unsigned groups;   /* column ranges per direction */
};

struct ss__lmunit {
        struct ss__lmjob *job;
        unsigned stream;
        int rc;
        uint32_t bad; /* 1 + the node, with SS_EINVAL */
        struct ss_err err;
};

/* Table t (kk x n words in the kernel's order, t[v * kk + i]) into columns
 * off..off + kk of out, k wide. */
static void ss__merge(const uint32_t *t, unsigned off, unsigned kk, unsigned k, uint32_t n,
                      uint32_t *out)
{
        for (uint32_t v = 0; v < n; v++)
                memcpy(out + (size_t)v * k + off, t + (size_t)v * kk, (size_t)kk * 4);
}

/* Columns [col, col + kc) of direction dir on stream u->stream. */
static int ss__lm_unit(struct ss__lmunit *u, int dir, unsigned col, unsigned kc, uint32_t *tmp,
                       unsigned turn)
{
        struct ss__lmjob *job = u->job;
        const uint32_t n = job->gpu->g.n;
        unsigned step = turn;
        for (unsigned off = 0; off < kc;) {
                const unsigned kk = kc - off < step ? kc - off : step;
                ss_dist dummy = 0;
                struct ss_gpu_batch q = {.kind = SS_GPU_BATCH_ALL,
                                         .sources = job->nodes + col + off,
                                         .k = kk,
                                         .dist = &dummy};
                struct ss_gpu_batch_result r = {0};
                struct ss__lmdst lm = {
                    .dev = job->dev[dir], .col = col + off, .cols = job->k, .host = tmp};
                uint32_t bad = 0;
                int rc = ss__batch_run(job->gpu, u->stream, &q, &r, dir == 1, &lm, &bad, &u->err);
                if (rc == SS_ENOGPU && bad == SS__LM_OVERFLOW && kk > 1) {
                        step = kk / 2; /* fewer landmarks per search fit the queues */
                        continue;
                }
                if (rc != SS_OK) {
                        u->bad = rc == SS_EINVAL ? bad : 0;
                        return rc;
                }
                if (!job->dev[dir])
                        ss__merge(tmp, col + off, kk, job->k, n, job->host[dir]);
                off += kk;
        }
        return SS_OK;
}

/* Unit i of 2 * groups is direction i % 2, column range i / 2; stream s
 * takes units s, s + streams, ... */
static void *ss__lm_stream(void *arg)
{
        struct ss__lmunit *u = arg;
        struct ss__lmjob *job = u->job;
        const uint32_t n = job->gpu->g.n;
        const uint64_t fcap = ss__bws_fcap(n, job->gpu->kcap);
        cudaSetDevice(job->gpu->device);
        /* Without device tables a turn's columns pass through the far piles
         * (2 fcap words) and a host buffer. */
        unsigned turn = job->gpu->kcap;
        if (!job->dev[0] && 2 * fcap / n < turn)
                turn = (unsigned)(2 * fcap / n);
        if (turn > job->k)
                turn = job->k;
        uint32_t *tmp = NULL;
        if (turn == 0) {
                u->rc = ss_err_set(&u->err, SS_ENOGPU, "no room to transpose landmark tables");
                return NULL;
        }
        if (!job->dev[0] && !(tmp = malloc((size_t)turn * n * 4))) {
                u->rc = ss_err_set(&u->err, SS_ENOMEM, "no memory for landmark tables");
                return NULL;
        }
        for (unsigned i = u->stream; i < 2 * job->groups && u->rc == SS_OK; i += job->streams) {
                const unsigned g = i / 2;
                const unsigned col = (unsigned)((uint64_t)job->k * g / job->groups);
                const unsigned end = (unsigned)((uint64_t)job->k * (g + 1) / job->groups);
                u->rc = ss__lm_unit(u, (int)(i % 2), col, end - col, tmp, turn);
        }
        free(tmp);
        return NULL;
}

struct ss__lmcopy {
        struct ss__lmjob *job;
        int rc[SS__LM_STREAMS];
        struct ss_err err[SS__LM_STREAMS];
};

/* Member i copies slice i of both device tables on stream i. */
static void ss__lm_copy(void *arg, unsigned i, unsigned nt)
{
        struct ss__lmcopy *c = arg;
        struct ss__lmjob *job = c->job;
        const uint64_t words = (uint64_t)job->gpu->g.n * job->k;
        uint64_t lo, hi;
        ss_team_share(words, i, nt, &lo, &hi);
        struct ss__ws *w = &job->gpu->ws[i % job->gpu->nstreams];
        cudaError_t e = cudaSetDevice(job->gpu->device);
        for (int d = 0; d < 2 && e == cudaSuccess; d++)
                e = cudaMemcpyAsync(job->host[d] + lo, job->dev[d] + lo, (hi - lo) * 4,
                                    cudaMemcpyDeviceToHost, w->stream);
        if (e == cudaSuccess)
                e = cudaStreamSynchronize(w->stream);
        c->rc[i] = e == cudaSuccess ? SS_OK
                                    : ss__cuda_fail(&c->err[i], "cudaMemcpyAsync (landmark tables)",
                                                    e, __FILE__, __LINE__);
}

/* Touches the host tables, so that the copies do not fault page by page. */
static void ss__lm_touch(void *arg, unsigned i, unsigned nt)
{
        struct ss__lmjob *job = arg;
        const uint64_t words = (uint64_t)job->gpu->g.n * job->k;
        uint64_t lo, hi;
        ss_team_share(words, i, nt, &lo, &hi);
        for (int d = 0; d < 2; d++)
                memset(job->host[d] + lo, 0, (hi - lo) * 4);
}

int ss_gpu_landmarks(struct ss_gpu *gpu, const uint32_t *nodes, unsigned k, uint32_t *from,
                     uint32_t *to, uint32_t *bad_node, struct ss_err *err)
{
        if (k == 0)
                return SS_OK;
        unsigned streams = 0;
        while (streams < SS__LM_STREAMS && ss_gpu_stream_batches(gpu, streams))
                streams++;
        if (streams == 0 || !gpu->has_rev)
                return ss_err_set(err, SS_ENOGPU,
                                  "landmarks on the GPU need a batch workspace and the reverse "
                                  "graph");
        const uint32_t n = gpu->g.n;
        struct ss__lmjob job = {.gpu = gpu, .nodes = nodes, .k = k, .host = {from, to}};
        /* Two units per pair of streams (a direction each), so that every
         * stream searches; no more column ranges than columns. */
        job.groups = streams / 2 > 1 ? streams / 2 : 1;
        if (job.groups > k)
                job.groups = k;
        job.streams = 2 * job.groups < streams ? 2 * job.groups : streams;

        SS__CUDA(cudaSetDevice(gpu->device));
        /* The streams' batch workspaces first, as many as fit (the streams
         * share them otherwise), then the device tables in what is left. */
        struct ss__bhost *held[SS__LM_STREAMS];
        unsigned nheld = 0;
        struct ss_err berr;
        /* A deadline already passed: take what is free or fits, never wait
         * (this thread holds what would come back). */
        const struct ss_cancel no_wait = {.deadline_ns = ss_now_ns()};
        while (nheld < job.streams && ss__bws_take(gpu, &no_wait, &held[nheld], &berr) == SS_OK)
                nheld++;
        while (nheld > 0)
                ss__bws_give(gpu, &gpu->ws[0], held[--nheld]);
        const uint64_t bytes = (uint64_t)n * k * 4;
        const char *hm = getenv("SS_GPU_LANDMARK_HOST_MERGE"); /* a test hook */
        bool claimed = false;
        if (!(hm && *hm && strcmp(hm, "0") != 0) && (claimed = ss__claim(gpu, 2 * bytes))) {
                if (cudaMalloc((void **)&job.dev[0], 2 * bytes) == cudaSuccess)
                        job.dev[1] = job.dev[0] + (uint64_t)n * k;
                else
                        cudaGetLastError(); /* the host merges instead */
        }
        const uint64_t t0 = ss_now_ns();
        struct ss__lmunit u[SS__LM_STREAMS];
        pthread_t th[SS__LM_STREAMS];
        bool started[SS__LM_STREAMS] = {false};
        for (unsigned s = 0; s < job.streams; s++) {
                u[s] = (struct ss__lmunit){.job = &job, .stream = s, .rc = SS_OK};
                started[s] = pthread_create(&th[s], NULL, ss__lm_stream, &u[s]) == 0;
        }
        if (job.dev[0])
                ss_team_run(ss_team_threads(0) < 8 ? ss_team_threads(0) : 8, NULL, ss__lm_touch,
                            &job);
        for (unsigned s = 0; s < job.streams; s++) {
                if (started[s])
                        pthread_join(th[s], NULL);
                else
                        ss__lm_stream(&u[s]); /* no thread: in turn, here */
        }
        const uint64_t t1 = ss_now_ns();
        int rc = SS_OK;
        for (unsigned s = 0; s < job.streams && rc == SS_OK; s++)
                if ((rc = u[s].rc) != SS_OK) {
                        *err = u[s].err;
                        if (rc == SS_EINVAL && u[s].bad)
                                *bad_node = u[s].bad - 1;
                }
        if (rc == SS_OK && job.dev[0]) {
                struct ss__lmcopy c = {.job = &job};
                ss_team_run(job.streams, NULL, ss__lm_copy, &c);
                for (unsigned s = 0; s < job.streams && rc == SS_OK; s++)
                        if ((rc = c.rc[s]) != SS_OK)
                                *err = c.err[s];
        }
        cudaFree(job.dev[0]);
        if (claimed)
                ss__unclaim(gpu, 2 * bytes);
        ss_log_debug("gpu", "landmark tables: %u units on %u streams in %.0f ms, %s in %.0f ms",
                     2 * job.groups, job.streams, (t1 - t0) / 1e6,
                     job.dev[0] ? "copied to the host" : "merged on the host",
                     (ss_now_ns() - t1) / 1e6);
        return rc;
}
