/* The GPU blocked Floyd-Warshall's host side: the plan, the transfers, the
 * rounds. Plain C against the CUDA runtime; kernels in kernels/fw.cu.
 *
 * In core the whole padded matrix (and its successors) is uploaded once and
 * comes back once. It is still closed in outer rounds of X rows and columns
 * (8 blocks by default), as out of core below but with every tile resident:
 * the cross of each outer round takes the B-wide rounds, and then the rest
 * of the matrix takes one min-plus product over all X values of k from the
 * snapshots. A product over X values of k reads and writes each tile once
 * per outer round instead of once per block of k, and runs its k loop 8
 * times longer; X = pitch is the plain blocked algorithm.
 *
 * Out of core the matrix stays in (pinned) host memory and the k axis is
 * cut into outer blocks of X rows and columns (X a multiple of the block B,
 * the largest whose buffers fit the budget). Outer round KO = [k0, k0 + X):
 *
 *   1. the cross, rows KO (all columns) and columns KO (all rows), goes to
 *      the device: R (X x pitch) and Cp (pitch x X). The in-core rounds run
 *      for every kb in KO, their phase 3 restricted to the cross (its tiles
 *      depend only on cross tiles). After phase 2 of each kb, row kb and
 *      column kb are copied to the snapshots Srow and Scol: the values
 *      the in-core algorithm's phase 3 reads in round kb. The cross goes
 *      back to the host.
 *   2. every tile outside the cross (X x X pieces) streams through the
 *      device on one of several streams: upload, one minplus over all of KO
 *      from the snapshots (which replays the phase-3 updates of every kb in
 *      KO in order), download. Copies of one tile overlap the kernels of
 *      the others.
 *
 * Each entry thus receives exactly the updates of the in-core run in the
 * same order, so the results, successors included, are identical; the
 * in-core run is the special case X = pitch. Ordering: the tile streams
 * wait for an event recorded once the snapshots are complete (the cross's
 * download overlaps the first tiles), and the next outer round waits for
 * every tile stream
 * (its cross upload reads rows the tiles wrote, and it overwrites the
 * snapshots they read).
 *
 * Device memory, W bytes per distance, P = 1 with successors:
 *   in core      pitch^2 (W + 4P) + X pitch (2W + 4P)   (the last term: Srow,
 *                Scol, its successors; none when X = pitch)
 *   out of core  X pitch (4W + 12P) + S X^2 (W + 4P)   (R, Cp, Srow, Scol, S tile buffers)
 */
#include "gpu/apsp_gpu.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "kernels/fw.h"
#include "kernels/kernels.h"

/* Device memory left to the driver and the runtime. */
#define SS__APSP_RESERVE     ((uint64_t)256 << 20)
#define SS__APSP_STREAMS     3u
#define SS__APSP_MAX_STREAMS 8u
/* In core, blocks per outer round: measured on an H100 (docs/benchmarks.md). */
#define SS__APSP_RESIDENT_BLOCKS 8u

uint64_t ss_apsp_gpu_incore_bytes(uint32_t pitch, uint32_t x, unsigned width, bool paths)
{
        const uint64_t snapshots =
            x < pitch ? (uint64_t)x * pitch * (2u * width + (paths ? 4u : 0u)) : 0;
        return (uint64_t)pitch * pitch * (width + (paths ? 4u : 0u)) + snapshots;
}

uint64_t ss_apsp_gpu_ooc_bytes(uint32_t pitch, uint32_t x, unsigned width, bool paths,
                               unsigned streams)
{
        return (uint64_t)x * pitch * (4u * width + (paths ? 12u : 0u)) +
               (uint64_t)streams * x * x * (width + (paths ? 4u : 0u));
}

static const char *ss__mb(uint64_t b, char *buf, size_t len)
{
        snprintf(buf, len, "%.1f MB", (double)b / 1e6);
        return buf;
}

bool ss_apsp_gpu_present(int device)
{
        int count = 0;
        const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && device >= 0 && device < count;
        cudaGetLastError();
        return ok;
}

int ss_apsp_gpu_plan(const struct ss_apsp_gpu_job *job, struct ss_apsp_gpu_plan *plan,
                     struct ss_err *err)
{
        char b1[32], b2[32], b3[32];
        memset(plan, 0, sizeof(*plan));
        if ((job->width != 2 && job->width != 4 && job->width != 8) ||
            (job->block != 64 && job->block != 128) || job->pitch == 0 || job->pitch % job->block)
                return ss_err_set(err, SS_EINVAL,
                                  "GPU Floyd-Warshall: width %u, block %u, pitch %" PRIu32
                                  " (2, 4 or 8; 64 or 128; a multiple of the block)",
                                  job->width, job->block, job->pitch);
        int count = 0;
        cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess || count == 0) {
                cudaGetLastError();
                return ss_err_set(err, SS_ENOGPU, "no usable CUDA device: %s",
                                  e != cudaSuccess ? cudaGetErrorString(e) : "none present");
        }
        if (job->device < 0 || job->device >= count)
                return ss_err_set(err, SS_ENOGPU, "CUDA device %d does not exist (%d present)",
                                  job->device, count);
        struct cudaDeviceProp prop;
        size_t free_b = 0, total_b = 0;
        if ((e = cudaSetDevice(job->device)) != cudaSuccess ||
            (e = cudaGetDeviceProperties(&prop, job->device)) != cudaSuccess ||
            (e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
                cudaGetLastError();
                return ss_err_set(err, SS_ENOGPU, "CUDA device %d is not usable: %s", job->device,
                                  cudaGetErrorString(e));
        }
        snprintf(plan->name, sizeof(plan->name), "%.127s", prop.name);
        uint64_t budget = free_b > SS__APSP_RESERVE ? free_b - SS__APSP_RESERVE : 0;
        if (job->memory_limit && job->memory_limit < budget)
                budget = job->memory_limit;
        plan->budget = budget;

        if (job->outer % job->block)
                return ss_err_set(err, SS_EINVAL,
                                  "GPU Floyd-Warshall: outer block %" PRIu32
                                  " (a multiple of the block, %u)",
                                  job->outer, job->block);
        uint32_t x = job->outer ? job->outer : SS__APSP_RESIDENT_BLOCKS * job->block;
        if (x > job->pitch)
                x = job->pitch;
        /* In core with snapshots, else in core without (X = pitch). */
        for (int plain = 0; plain < 2; plain++, x = job->pitch) {
                const uint64_t incore =
                    ss_apsp_gpu_incore_bytes(job->pitch, x, job->width, job->paths);
                if (incore <= budget) {
                        plan->outer = x;
                        plan->device_bytes = incore;
                        return SS_OK;
                }
        }
        const uint64_t incore =
            ss_apsp_gpu_incore_bytes(job->pitch, job->pitch, job->width, job->paths);
        unsigned streams = job->streams ? job->streams : SS__APSP_STREAMS;
        if (streams > SS__APSP_MAX_STREAMS)
                streams = SS__APSP_MAX_STREAMS;
        /* The largest outer block below the pitch that fits: fewer outer
         * rounds mean fewer trips of the matrix over the bus. */
        x = job->pitch - job->block;
        while (x >= job->block &&
               ss_apsp_gpu_ooc_bytes(job->pitch, x, job->width, job->paths, streams) > budget)
                x -= job->block;
        if (x < job->block)
                return ss_err_set(
                    err, SS_ETOOBIG,
                    "the matrix (%" PRIu32 " padded nodes, %u-bit%s) needs %s of device memory in "
                    "core and at least %s out of core (outer block %u); the device budget is %s",
                    job->pitch, job->width * 8, job->paths ? ", with successors" : "",
                    ss__mb(incore, b1, sizeof(b1)),
                    ss__mb(ss_apsp_gpu_ooc_bytes(job->pitch, job->block, job->width, job->paths,
                                                 streams),
                           b2, sizeof(b2)),
                    job->block, ss__mb(budget, b3, sizeof(b3)));
        plan->out_of_core = true;
        plan->outer = x;
        plan->streams = streams;
        plan->device_bytes = ss_apsp_gpu_ooc_bytes(job->pitch, x, job->width, job->paths, streams);
        return SS_OK;
}

/* Everything a run holds, for one cleanup path. */
struct ss__run {
        unsigned char *R, *Cp, *Srow, *Scol; /* distances */
        uint32_t *Rs, *Cps, *Scols;          /* successors */
        unsigned char *T[SS__APSP_MAX_STREAMS];
        uint32_t *Ts[SS__APSP_MAX_STREAMS];
        cudaStream_t s0, ts[SS__APSP_MAX_STREAMS];
        cudaEvent_t ev_start, ev_up, ev_comp, ev_end, ev_cross, ev_round[2];
        cudaEvent_t ev_tile[SS__APSP_MAX_STREAMS];
        /* In core in outer rounds: the copies' stream, and an event per
         * band of rows of the first and of the last round. */
        cudaStream_t s1;
        cudaEvent_t *ev_band, ev_s1;
        unsigned nbands;
        bool pinned_d, pinned_s;
};

/* Rows [a, b) x columns [c0, c1) of the host matrix (and successors) to or
 * from the resident one (pitch P), on stream s. */
static int ss__copy_rows(const struct ss__run *r, const struct ss_apsp_gpu_job *job, uint64_t a,
                         uint64_t b, uint64_t c0, uint64_t c1, bool up, cudaStream_t s,
                         struct ss_err *err)
{
        const uint64_t P = job->pitch, W = job->width;
        unsigned char *hd = job->dist, *dd = r->R;
        const enum cudaMemcpyKind kind = up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        if (b <= a || c1 <= c0)
                return SS_OK;
        const uint64_t off = a * P + c0;
        SS__CUDA(cudaMemcpy2DAsync(up ? dd + off * W : hd + off * W, P * W,
                                   up ? hd + off * W : dd + off * W, P * W, (c1 - c0) * W, b - a,
                                   kind, s));
        if (job->succ)
                SS__CUDA(cudaMemcpy2DAsync(up ? r->Rs + off : job->succ + off, P * 4,
                                           up ? job->succ + off : r->Rs + off, P * 4, (c1 - c0) * 4,
                                           b - a, kind, s));
        return SS_OK;
}

#define SS__RC(expr)                                                                               \
        do {                                                                                       \
                rc = (expr);                                                                       \
                if (rc)                                                                            \
                        goto out;                                                                  \
        } while (0)

static void ss__run_free(struct ss__run *r, const struct ss_apsp_gpu_job *job, unsigned ns)
{
        /* After a failure the streams may still run: wait for them, and
         * ignore what a broken context answers. */
        if (r->s0)
                cudaStreamSynchronize(r->s0);
        if (r->s1)
                cudaStreamSynchronize(r->s1);
        for (unsigned i = 0; i < ns; i++)
                if (r->ts[i])
                        cudaStreamSynchronize(r->ts[i]);
        cudaFree(r->R);
        cudaFree(r->Cp);
        cudaFree(r->Srow);
        cudaFree(r->Scol);
        cudaFree(r->Rs);
        cudaFree(r->Cps);
        cudaFree(r->Scols);
        for (unsigned i = 0; i < SS__APSP_MAX_STREAMS; i++) {
                cudaFree(r->T[i]);
                cudaFree(r->Ts[i]);
                if (r->ts[i])
                        cudaStreamDestroy(r->ts[i]);
                if (r->ev_tile[i])
                        cudaEventDestroy(r->ev_tile[i]);
        }
        cudaEvent_t evs[] = {r->ev_start, r->ev_up,       r->ev_comp,    r->ev_end,
                             r->ev_cross, r->ev_round[0], r->ev_round[1]};
        for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
                if (evs[i])
                        cudaEventDestroy(evs[i]);
        for (unsigned i = 0; i < 2 * r->nbands; i++)
                if (r->ev_band[i])
                        cudaEventDestroy(r->ev_band[i]);
        free(r->ev_band);
        if (r->ev_s1)
                cudaEventDestroy(r->ev_s1);
        if (r->s1)
                cudaStreamDestroy(r->s1);
        if (r->s0)
                cudaStreamDestroy(r->s0);
        if (r->pinned_d)
                cudaHostUnregister(job->dist);
        if (r->pinned_s)
                cudaHostUnregister(job->succ);
        cudaGetLastError();
}

/* Rows or columns outside the cross, cut into pieces of at most x: the
 * pieces of [0, k0) and then of [k0 + kn, pitch). Returns the count; fills
 * start and len when they are not NULL. */
static uint32_t ss__pieces(uint32_t pitch, uint32_t k0, uint32_t kn, uint32_t x, uint32_t *start,
                           uint32_t *len)
{
        uint32_t c = 0;
        const uint32_t from[2] = {0, k0 + kn}, to[2] = {k0, pitch};
        for (int part = 0; part < 2; part++)
                for (uint32_t a = from[part]; a < to[part]; a += x, c++)
                        if (start) {
                                start[c] = a;
                                len[c] = to[part] - a < x ? to[part] - a : x;
                        }
        return c;
}

int ss_apsp_gpu_run(const struct ss_apsp_gpu_job *job, struct ss_apsp_gpu_plan *plan,
                    double *gpu_ms, double *kernel_ms, struct ss_err *err)
{
        struct ss__run r;
        memset(&r, 0, sizeof(r));
        *gpu_ms = 0;
        *kernel_ms = 0;
        const uint64_t t_start = ss_now_ns();
        uint64_t t_end = 0;
        const bool paths = job->succ != NULL;
        struct ss_apsp_gpu_job pj = *job;
        pj.paths = paths;
        int rc = ss_apsp_gpu_plan(&pj, plan, err);
        if (rc)
                return rc;
        const uint64_t W = job->width, P = job->pitch, B = job->block;
        const uint32_t X = plan->outer, nt = (uint32_t)(P / B);
        const bool ooc = plan->out_of_core;
        const bool snap = X < P; /* outer rounds below the whole matrix keep snapshots */
        /* In core in outer rounds the matrix goes up and down in bands of
         * rows on a stream of its own: the first round's product waits
         * only for its band, the last round's bands go down as they end. */
        const bool pipe = !ooc && snap;
        const uint64_t Rrows = ooc ? X : P;
        const unsigned ns = ooc ? plan->streams : 0;
        const struct ss__fw_cfg cfg = {
            .width = job->width, .block = job->block, .shift = job->shift, .paths = paths};
        unsigned char *hd = job->dist;
        uint32_t *hs = job->succ;
        uint32_t *pstart = NULL, *plen = NULL;
        unsigned inner = 0; /* inner rounds issued, for the throttle */

        SS__CUDA_GOTO(cudaSetDevice(job->device), out);
        SS__RC(ss__fw_prepare(&cfg, err));
        SS__CUDA_GOTO(cudaStreamCreateWithFlags(&r.s0, cudaStreamNonBlocking), out);
        for (unsigned i = 0; i < ns; i++) {
                SS__CUDA_GOTO(cudaStreamCreateWithFlags(&r.ts[i], cudaStreamNonBlocking), out);
                SS__CUDA_GOTO(cudaEventCreateWithFlags(&r.ev_tile[i], cudaEventDisableTiming), out);
        }
        SS__CUDA_GOTO(cudaEventCreate(&r.ev_start), out);
        SS__CUDA_GOTO(cudaEventCreate(&r.ev_up), out);
        SS__CUDA_GOTO(cudaEventCreate(&r.ev_comp), out);
        SS__CUDA_GOTO(cudaEventCreate(&r.ev_end), out);
        SS__CUDA_GOTO(cudaEventCreateWithFlags(&r.ev_cross, cudaEventDisableTiming), out);
        SS__CUDA_GOTO(cudaEventCreateWithFlags(&r.ev_round[0], cudaEventDisableTiming), out);
        SS__CUDA_GOTO(cudaEventCreateWithFlags(&r.ev_round[1], cudaEventDisableTiming), out);
        if (pipe) {
                SS__CUDA_GOTO(cudaStreamCreateWithFlags(&r.s1, cudaStreamNonBlocking), out);
                SS__CUDA_GOTO(cudaEventCreateWithFlags(&r.ev_s1, cudaEventDisableTiming), out);
                const unsigned nb = (unsigned)(P / X) + 1;
                if (!(r.ev_band = calloc(2 * (size_t)nb, sizeof(cudaEvent_t)))) {
                        rc = ss_err_set(err, SS_ENOMEM, "out of memory");
                        goto out;
                }
                r.nbands = nb;
                for (unsigned i = 0; i < 2 * nb; i++)
                        SS__CUDA_GOTO(
                            cudaEventCreateWithFlags(&r.ev_band[i], cudaEventDisableTiming), out);
        }

        SS__CUDA_GOTO(cudaMalloc((void **)&r.R, Rrows * P * W), out);
        if (paths)
                SS__CUDA_GOTO(cudaMalloc((void **)&r.Rs, Rrows * P * 4), out);
        if (snap) {
                SS__CUDA_GOTO(cudaMalloc((void **)&r.Srow, (uint64_t)X * P * W), out);
                SS__CUDA_GOTO(cudaMalloc((void **)&r.Scol, P * X * W), out);
                if (paths)
                        SS__CUDA_GOTO(cudaMalloc((void **)&r.Scols, P * X * 4), out);
        }
        if (ooc) {
                SS__CUDA_GOTO(cudaMalloc((void **)&r.Cp, P * X * W), out);
                if (paths)
                        SS__CUDA_GOTO(cudaMalloc((void **)&r.Cps, P * X * 4), out);
                for (unsigned i = 0; i < ns; i++) {
                        SS__CUDA_GOTO(cudaMalloc((void **)&r.T[i], (uint64_t)X * X * W), out);
                        if (paths)
                                SS__CUDA_GOTO(cudaMalloc((void **)&r.Ts[i], (uint64_t)X * X * 4),
                                              out);
                }
                const uint32_t most = (uint32_t)(P / X) + 3; /* pieces in any round */
                pstart = malloc(2 * most * sizeof(uint32_t));
                if (!pstart) {
                        rc = ss_err_set(err, SS_ENOMEM, "out of memory");
                        goto out;
                }
                plen = pstart + most;
        }
        /* Pinned host memory lets the copies run asynchronously at full
         * speed; without it (a locked-memory limit) they still work. */
        const uint64_t t_pin = ss_now_ns();
        r.pinned_d = cudaHostRegister(hd, P * P * W, cudaHostRegisterDefault) == cudaSuccess;
        if (paths)
                r.pinned_s =
                    cudaHostRegister(hs, P * P * 4, cudaHostRegisterDefault) == cudaSuccess;
        cudaGetLastError();
        plan->pin_ms = (double)(ss_now_ns() - t_pin) * 1e-6;
        plan->setup_ms = (double)(ss_now_ns() - t_start) * 1e-6;

        SS__CUDA_GOTO(cudaEventRecord(r.ev_start, r.s0), out);
        for (uint32_t k0 = 0; k0 < P; k0 += X) {
                const uint32_t kn = (uint32_t)(P - k0 < X ? P - k0 : X);
                const uint32_t kb0 = (uint32_t)(k0 / B), m = (uint32_t)(kn / B);
                if (k0 > 0)
                        for (unsigned i = 0; i < ns; i++)
                                SS__CUDA_GOTO(cudaStreamWaitEvent(r.s0, r.ev_tile[i], 0), out);
                /* 1. The cross (in core: the whole matrix, once; in outer
                 * rounds the cross first, then the rest in bands). */
                if (pipe && k0 == 0) {
                        SS__RC(ss__copy_rows(&r, job, 0, kn, 0, P, true, r.s0, err));
                        SS__RC(ss__copy_rows(&r, job, kn, P, 0, kn, true, r.s0, err));
                        SS__CUDA_GOTO(cudaEventRecord(r.ev_up, r.s0), out);
                        SS__CUDA_GOTO(cudaStreamWaitEvent(r.s1, r.ev_start, 0), out);
                        unsigned bi = 0;
                        for (uint64_t a = kn; a < P; a += X, bi++) {
                                SS__RC(ss__copy_rows(&r, job, a, a + X < P ? a + X : P, kn, P, true,
                                                     r.s1, err));
                                SS__CUDA_GOTO(cudaEventRecord(r.ev_band[bi], r.s1), out);
                        }
                } else if (ooc || k0 == 0) {
                        const uint64_t first = ooc ? k0 : 0, rows = ooc ? kn : P;
                        SS__CUDA_GOTO(cudaMemcpyAsync(r.R, hd + first * P * W, rows * P * W,
                                                      cudaMemcpyHostToDevice, r.s0),
                                      out);
                        if (paths)
                                SS__CUDA_GOTO(cudaMemcpyAsync(r.Rs, hs + first * P, rows * P * 4,
                                                              cudaMemcpyHostToDevice, r.s0),
                                              out);
                }
                if (ooc) {
                        SS__CUDA_GOTO(cudaMemcpy2DAsync(r.Cp, X * W, hd + k0 * W, P * W, kn * W, P,
                                                        cudaMemcpyHostToDevice, r.s0),
                                      out);
                        if (paths)
                                SS__CUDA_GOTO(cudaMemcpy2DAsync(r.Cps, X * 4, hs + k0, P * 4,
                                                                kn * 4, P, cudaMemcpyHostToDevice,
                                                                r.s0),
                                              out);
                } else if (k0 == 0 && !pipe) { /* pipe recorded it after the cross */
                        SS__CUDA_GOTO(cudaEventRecord(r.ev_up, r.s0), out);
                }
                /* Out of core R holds rows KO and Cp columns KO; in core R
                 * holds everything. */
                const struct ss__fw_view v = {.r = r.R,
                                              .c = r.Cp,
                                              .rs = r.Rs,
                                              .cs = r.Cps,
                                              .rp = P,
                                              .cp = X,
                                              .k0 = ooc ? k0 : 0,
                                              .kn = ooc ? kn : (uint32_t)P};
                /* Row and column kb as the device has them, for the snapshots. */
                const uint64_t rfirst = ooc ? k0 : 0;
                unsigned char *col = ooc ? r.Cp : r.R;
                uint32_t *cols_s = ooc ? r.Cps : r.Rs;
                const uint64_t cpitch = ooc ? X : P, cfirst = ooc ? k0 : 0;
                for (uint32_t kb = kb0; kb < kb0 + m; kb++, inner++) {
                        /* Keep one round queued ahead of the device, so that
                         * progress and cancellation follow it. */
                        SS__CUDA_GOTO(cudaEventSynchronize(r.ev_round[inner % 2]), out);
                        if (ss_cancelled(job->cancel)) {
                                rc = ss_err_set(err, SS_ETIMEDOUT,
                                                "the all-pairs computation was cancelled");
                                goto out;
                        }
                        if (job->progress)
                                job->progress(job->progress_arg, (double)kb / nt);
                        SS__RC(ss__fw_diag(&cfg, &v, kb, r.s0, err));
                        SS__RC(ss__fw_panels(&cfg, &v, kb, nt, r.s0, err));
                        if (snap) {
                                const uint64_t off = kb * B - k0;
                                const uint64_t cc = kb * B - cfirst, rr = kb * B - rfirst;
                                SS__CUDA_GOTO(cudaMemcpy2DAsync(r.Scol + off * W, X * W,
                                                                col + cc * W, cpitch * W, B * W, P,
                                                                cudaMemcpyDeviceToDevice, r.s0),
                                              out);
                                if (paths)
                                        SS__CUDA_GOTO(
                                            cudaMemcpy2DAsync(r.Scols + off, X * 4, cols_s + cc,
                                                              cpitch * 4, B * 4, P,
                                                              cudaMemcpyDeviceToDevice, r.s0),
                                            out);
                                SS__CUDA_GOTO(cudaMemcpyAsync(r.Srow + off * P * W,
                                                              r.R + rr * P * W, B * P * W,
                                                              cudaMemcpyDeviceToDevice, r.s0),
                                              out);
                        }
                        /* Phase 3 on the cross: rows of KO (every column), then
                         * the other rows (columns of KO). */
                        const struct ss__fw_range in_ko = {kb0, m - 1, kb, 1};
                        const struct ss__fw_range all = {0, nt - 1, kb, 1};
                        SS__RC(ss__fw_minplus(&cfg, &v, &v, &v, in_ko, all, kb * (uint32_t)B,
                                              (uint32_t)B, r.s0, err));
                        if (snap) {
                                const struct ss__fw_range out_ko = {0, nt - m, kb0, m};
                                SS__RC(ss__fw_minplus(&cfg, &v, &v, &v, out_ko, in_ko,
                                                      kb * (uint32_t)B, (uint32_t)B, r.s0, err));
                        }
                        SS__CUDA_GOTO(cudaEventRecord(r.ev_round[inner % 2], r.s0), out);
                }
                const struct ss__fw_view scol = {
                    .c = r.Scol, .cs = r.Scols, .cp = X, .k0 = k0, .kn = 0};
                const struct ss__fw_view srow = {.r = r.Srow, .rp = P, .k0 = k0, .kn = kn};
                const struct ss__fw_range rest = {0, nt - m, kb0, m};
                if (!ooc) {
                        /* 2. In core: the rest of the matrix, in one product;
                         * in bands of rows in the first round (each waits
                         * for its upload) and in the last (each goes down
                         * as it ends, the rows of KO first). */
                        const bool first = k0 == 0, last = k0 + kn == P;
                        if (!pipe || (!first && !last)) {
                                if (snap)
                                        SS__RC(ss__fw_minplus(&cfg, &v, &scol, &srow, rest, rest,
                                                              k0, kn, r.s0, err));
                                continue;
                        }
                        if (last) {
                                SS__CUDA_GOTO(cudaEventRecord(r.ev_cross, r.s0), out);
                                SS__CUDA_GOTO(cudaStreamWaitEvent(r.s1, r.ev_cross, 0), out);
                                SS__RC(ss__copy_rows(&r, job, k0, P, 0, P, false, r.s1, err));
                        }
                        const uint64_t from = first ? kn : 0, to = first ? P : k0;
                        unsigned bi = 0;
                        for (uint64_t a = from; a < to; a += X, bi++) {
                                const uint64_t b = a + X < to ? a + X : to;
                                if (first)
                                        SS__CUDA_GOTO(cudaStreamWaitEvent(r.s0, r.ev_band[bi], 0),
                                                      out);
                                const struct ss__fw_range band = {
                                    (uint32_t)(a / B), (uint32_t)((b - a) / B), UINT32_MAX, 0};
                                SS__RC(ss__fw_minplus(&cfg, &v, &scol, &srow, band, rest, k0, kn,
                                                      r.s0, err));
                                if (!last)
                                        continue;
                                cudaEvent_t done = r.ev_band[r.nbands + bi];
                                SS__CUDA_GOTO(cudaEventRecord(done, r.s0), out);
                                SS__CUDA_GOTO(cudaStreamWaitEvent(r.s1, done, 0), out);
                                SS__RC(ss__copy_rows(&r, job, a, b, 0, P, false, r.s1, err));
                        }
                        continue;
                }
                /* The snapshots are complete: the tiles may start while the
                 * cross goes back (they touch other host rows and columns). */
                SS__CUDA_GOTO(cudaEventRecord(r.ev_cross, r.s0), out);
                SS__CUDA_GOTO(cudaMemcpyAsync(hd + (uint64_t)k0 * P * W, r.R, (uint64_t)kn * P * W,
                                              cudaMemcpyDeviceToHost, r.s0),
                              out);
                if (paths)
                        SS__CUDA_GOTO(cudaMemcpyAsync(hs + (uint64_t)k0 * P, r.Rs,
                                                      (uint64_t)kn * P * 4, cudaMemcpyDeviceToHost,
                                                      r.s0),
                                      out);
                /* Column band rows outside KO go back; rows of KO came with R. */
                const uint32_t band_from[2] = {0, k0 + kn}, band_to[2] = {k0, (uint32_t)P};
                for (int part = 0; part < 2; part++) {
                        const uint64_t h = band_to[part] - band_from[part];
                        if (!h)
                                continue;
                        const uint64_t row = band_from[part];
                        SS__CUDA_GOTO(cudaMemcpy2DAsync(hd + (row * P + k0) * W, P * W,
                                                        r.Cp + row * X * W, X * W, kn * W, h,
                                                        cudaMemcpyDeviceToHost, r.s0),
                                      out);
                        if (paths)
                                SS__CUDA_GOTO(cudaMemcpy2DAsync(hs + row * P + k0, P * 4,
                                                                r.Cps + row * X, X * 4, kn * 4, h,
                                                                cudaMemcpyDeviceToHost, r.s0),
                                              out);
                }

                /* 2. The tiles outside the cross. */
                const uint32_t np = ss__pieces((uint32_t)P, k0, kn, X, pstart, plen);
                const struct ss__fw_range none = {0, 0, UINT32_MAX, 0};
                unsigned t = 0;
                for (unsigned i = 0; i < ns; i++)
                        SS__CUDA_GOTO(cudaStreamWaitEvent(r.ts[i], r.ev_cross, 0), out);
                for (uint32_t a = 0; a < np; a++) {
                        for (uint32_t b = 0; b < np; b++, t++) {
                                if (ss_cancelled(job->cancel)) {
                                        rc = ss_err_set(err, SS_ETIMEDOUT,
                                                        "the all-pairs computation was cancelled");
                                        goto out;
                                }
                                const unsigned q = t % ns;
                                cudaStream_t s = r.ts[q];
                                const uint64_t i0 = pstart[a], h = plen[a];
                                const uint64_t j0 = pstart[b], w = plen[b];
                                SS__CUDA_GOTO(
                                    cudaMemcpy2DAsync(r.T[q], w * W, hd + (i0 * P + j0) * W, P * W,
                                                      w * W, h, cudaMemcpyHostToDevice, s),
                                    out);
                                if (paths)
                                        SS__CUDA_GOTO(cudaMemcpy2DAsync(
                                                          r.Ts[q], w * 4, hs + i0 * P + j0, P * 4,
                                                          w * 4, h, cudaMemcpyHostToDevice, s),
                                                      out);
                                const struct ss__fw_view tv = {.r = r.T[q],
                                                               .rs = r.Ts[q],
                                                               .rp = w,
                                                               .i0 = (uint32_t)i0,
                                                               .j0 = (uint32_t)j0,
                                                               .kn = (uint32_t)h};
                                struct ss__fw_range rows = none, cols = none;
                                rows.base = (uint32_t)(i0 / B);
                                rows.count = (uint32_t)(h / B);
                                cols.base = (uint32_t)(j0 / B);
                                cols.count = (uint32_t)(w / B);
                                SS__RC(ss__fw_minplus(&cfg, &tv, &scol, &srow, rows, cols, k0, kn,
                                                      s, err));
                                SS__CUDA_GOTO(cudaMemcpy2DAsync(hd + (i0 * P + j0) * W, P * W,
                                                                r.T[q], w * W, w * W, h,
                                                                cudaMemcpyDeviceToHost, s),
                                              out);
                                if (paths)
                                        SS__CUDA_GOTO(cudaMemcpy2DAsync(hs + i0 * P + j0, P * 4,
                                                                        r.Ts[q], w * 4, w * 4, h,
                                                                        cudaMemcpyDeviceToHost, s),
                                                      out);
                        }
                }
                for (unsigned i = 0; i < ns; i++)
                        SS__CUDA_GOTO(cudaEventRecord(r.ev_tile[i], r.ts[i]), out);
        }
        for (unsigned i = 0; i < ns; i++)
                SS__CUDA_GOTO(cudaStreamWaitEvent(r.s0, r.ev_tile[i], 0), out);
        if (!ooc) {
                SS__CUDA_GOTO(cudaEventRecord(r.ev_comp, r.s0), out);
                if (pipe) {
                        SS__CUDA_GOTO(cudaEventRecord(r.ev_s1, r.s1), out);
                        SS__CUDA_GOTO(cudaStreamWaitEvent(r.s0, r.ev_s1, 0), out);
                } else {
                        SS__RC(ss__copy_rows(&r, job, 0, P, 0, P, false, r.s0, err));
                }
        }
        SS__CUDA_GOTO(cudaEventRecord(r.ev_end, r.s0), out);
        SS__CUDA_GOTO(cudaEventSynchronize(r.ev_end), out);
        t_end = ss_now_ns();
        SS__CUDA_GOTO(cudaGetLastError(), out);
        float ms = 0;
        SS__CUDA_GOTO(cudaEventElapsedTime(&ms, r.ev_start, r.ev_end), out);
        *gpu_ms = ms;
        /* What crossed the bus, from the plan: up, the cross of every outer
         * round (the column band with all its rows) and every tile outside
         * it; down, the same less the band's rows that R brought back. */
        for (uint64_t k0 = 0; k0 < P; k0 += X) {
                const uint64_t kn = P - k0 < X ? P - k0 : X;
                const uint64_t cells = kn * P + (ooc ? (P - kn) * kn + (P - kn) * (P - kn) : 0);
                const uint64_t up =
                    cells * (W + (paths ? 4 : 0)) + (ooc ? kn * kn * (W + (paths ? 4 : 0)) : 0);
                plan->h2d_bytes += up;
                plan->d2h_bytes += cells * (W + (paths ? 4 : 0));
        }
        if (!ooc) {
                SS__CUDA_GOTO(cudaEventElapsedTime(&ms, r.ev_up, r.ev_comp), out);
                *kernel_ms = ms;
        }
out:
        ss__run_free(&r, job, ns);
        free(pstart);
        if (t_end)
                plan->teardown_ms = (double)(ss_now_ns() - t_end) * 1e-6;
        return rc;
}
