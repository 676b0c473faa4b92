/* The blocked Floyd-Warshall on CPU threads.
 *
 * The matrix (pitch x pitch, pitch a multiple of the block B, the padding
 * infinite) is cut into B x B tiles. Round kb (one per block of B values of
 * k) has three phases, separated by barriers:
 *
 *   1. the diagonal tile (kb, kb) is closed by the plain algorithm;
 *   2. the other tiles of row kb and of column kb are updated through it
 *      (each tile on its own, so they run in parallel);
 *   3. every other tile (i, j) becomes min(tile, (i, kb) (x) (kb, j)), a
 *      min-plus product of two tiles from phase 2: the bulk of the work,
 *      cache-sized and vectorised.
 *
 * Ties and successors. Phases 1 and 2 take k in order and replace an entry
 * only when the new distance is strictly smaller; its successor becomes that
 * of (i, k). Phase 3 must pick, among the B values of k, the first one that
 * gives the smallest sum, and only if that sum is strictly smaller than the
 * entry. Doing this with compares and selects would double the inner loop;
 * instead the stored distances carry 7 spare low bits (shift), the row panel
 * is copied with each entry of its row k raised by (k mod 64) + 1, and the
 * plain min() of the sums then yields, in the low bits, which k won (the
 * smallest index on a tie, and an old entry, whose low bits are 0, wins a
 * tie against every candidate). After each chunk of 64 k the tags become
 * successors and are cleared. The GPU kernels (kernels/fw.cu) follow the
 * same rules, so the CPU, the GPU in core and the GPU out of core produce
 * the same successor matrix for the same block.
 *
 * Within phase 1 and 2 every update of round k reads row k and column k of
 * the tile, which round k cannot change (d(k, k) = 0, and the padding is
 * infinite everywhere, its diagonal included), so the order of the updates
 * inside a round does not matter.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "apsp/internal.h"

struct ss__fw {
        struct ss_apsp *a;
        const struct ss_apsp_options *o;
        uint64_t p;   /* pitch */
        unsigned B;   /* block */
        uint32_t nt;  /* tiles per side */
        void *tagged; /* with paths: row panel kb with tags, B rows of pitch entries */
        pthread_barrier_t bar;
        bool bar_ready;
        atomic_int stop; /* set by thread 0 when cancelled */
};

#define FW_T      uint32_t
#define FW_(name) ss__fw32_##name
#include "apsp/cpu_fw_impl.h"
#undef FW_T
#undef FW_

#define FW_T      uint64_t
#define FW_(name) ss__fw64_##name
#include "apsp/cpu_fw_impl.h"
#undef FW_T
#undef FW_

static void ss__fw_setup(void *arg, unsigned n)
{
        struct ss__fw *f = arg;
        f->bar_ready = pthread_barrier_init(&f->bar, NULL, n) == 0;
}

static void ss__fw_worker(void *arg, unsigned tid, unsigned n)
{
        struct ss__fw *f = arg;
        const bool w4 = f->a->width == 4;
        const uint32_t nt = f->nt;
        if (!f->bar_ready)
                return;
        for (uint32_t kb = 0; kb < nt; kb++) {
                if (tid == 0) {
                        if (ss_cancelled(f->o->cancel))
                                atomic_store(&f->stop, 1);
                        else {
                                ss__apsp_progress(f->o, (double)kb / nt);
                                if (w4)
                                        ss__fw32_diag(f, kb);
                                else
                                        ss__fw64_diag(f, kb);
                        }
                }
                pthread_barrier_wait(&f->bar);
                if (atomic_load(&f->stop))
                        return;
                /* Phase 2: tiles 0..nt-2 of the row, then of the column,
                 * skipping the diagonal. */
                for (uint32_t t = tid; t < 2 * (nt - 1); t += n) {
                        const uint32_t x = t % (nt - 1), tile = x + (x >= kb);
                        if (t < nt - 1)
                                w4 ? ss__fw32_row_tile(f, kb, tile)
                                   : ss__fw64_row_tile(f, kb, tile);
                        else
                                w4 ? ss__fw32_col_tile(f, kb, tile)
                                   : ss__fw64_col_tile(f, kb, tile);
                }
                pthread_barrier_wait(&f->bar);
                if (f->tagged) {
                        const uint64_t j0 = f->p * tid / n, j1 = f->p * (tid + 1) / n;
                        w4 ? ss__fw32_tag_rows(f, kb, j0, j1) : ss__fw64_tag_rows(f, kb, j0, j1);
                        pthread_barrier_wait(&f->bar);
                }
                /* Phase 3: every tile off row and column kb. Neighbouring
                 * tiles of a row share their (i, kb) tile, so a thread takes
                 * a run of them. */
                const uint64_t tiles = (uint64_t)(nt - 1) * (nt - 1);
                for (uint64_t t = tid; t < tiles; t += n) {
                        const uint32_t x = (uint32_t)(t / (nt - 1)), y = (uint32_t)(t % (nt - 1));
                        const uint32_t ti = x + (x >= kb), tj = y + (y >= kb);
                        w4 ? ss__fw32_cross_tile(f, kb, ti, tj)
                           : ss__fw64_cross_tile(f, kb, ti, tj);
                }
                pthread_barrier_wait(&f->bar);
        }
}

int ss__apsp_cpu_fw(struct ss_apsp *a, const struct ss_apsp_options *o, unsigned threads,
                    struct ss_err *err)
{
        struct ss__fw f = {
            .a = a,
            .o = o,
            .p = a->pitch,
            .B = a->info.plan.block,
        };
        f.nt = (uint32_t)(f.p / f.B);
        if (a->succ) {
                f.tagged = malloc(f.p * f.B * a->width);
                if (!f.tagged)
                        return ss_err_set(err, SS_ENOMEM, "out of memory for a %u-row panel", f.B);
        }
        /* More threads than phase-3 tiles would only wait at the barriers. */
        const uint64_t tiles = (uint64_t)f.nt * f.nt;
        if (threads > tiles)
                threads = (unsigned)tiles;
        ss__apsp_parallel(threads, ss__fw_setup, ss__fw_worker, &f);
        free(f.tagged);
        if (!f.bar_ready)
                return ss_err_set(err, SS_ENOMEM, "could not create a thread barrier");
        pthread_barrier_destroy(&f.bar);
        if (atomic_load(&f.stop))
                return ss_err_set(err, SS_ETIMEDOUT, "the all-pairs computation was cancelled");
        return SS_OK;
}
