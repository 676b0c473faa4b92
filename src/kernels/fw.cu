/* The blocked Floyd-Warshall on the GPU: three kernels for the three phases
 * of a round (apsp/cpu_fw.c states the rules they share with the CPU).
 *
 *   diag     one block of 1024 threads closes the B x B diagonal tile in
 *            shared memory, k in order, one barrier per k;
 *   panels   one block (512 threads) per tile of row and column kb, the
 *            tile in shared memory, the diagonal tile read through L1;
 *   minplus  one block (256 threads, 16 x 16) per B x B tile of the rest:
 *            a min-plus product tiled like a GEMM. Each thread keeps a
 *            (B/16) x (B/16) block of the tile in registers (8 x 8 for
 *            B = 128), split in two halves per axis so that its shared-memory
 *            reads are 16-byte vectors without bank conflicts; k runs in
 *            chunks of 64 staged in shared memory (A transposed, B with the
 *            chunk's tags added). The inner step is one __viaddmin_u32
 *            (Hopper's fused add-and-min) per entry for 32-bit distances, so
 *            the successor costs nothing in the loop: the tags in the low
 *            bits say which k won, and are resolved once per chunk.
 *
 * The same minplus kernel serves the out-of-core tiles (k over a whole
 * outer block, A and B from the band snapshots), so every entry sees the
 * same sequence of updates in core and out of core.
 *
 * This file also compiles as plain C++ against a CPU stand-in for the
 * device (tests/apsp/emu), which defines SS__EMU and the macros below, so
 * that the kernels and the driver are tested on machines without a GPU.
 */
#include "kernels/fw.h"
#include "kernels/kernels.h"

#ifndef SS__EMU
#define SS__FW_LAUNCH(kernel, grid, block, smem, stream, ...)                                      \
        kernel<<<grid, block, smem, stream>>>(__VA_ARGS__)
#define SS__FW_SMEM()            ss__fw_smem
#define SS__UNROLL               _Pragma("unroll")
#define SS__FW_ALIGNED(p, bytes) ((void)0)
extern __shared__ __align__(16) unsigned char ss__fw_smem[];
#endif

namespace
{

constexpr int SS__KC = 64;          /* k per chunk: the tag range, as SS__FW_CHUNK */
constexpr int SS__MP_THREADS = 256; /* minplus: 16 x 16 */
constexpr int SS__DIAG_THREADS = 1024;
constexpr int SS__PANEL_THREADS = 512;

typedef unsigned long long u64;

template <typename T>
__device__ __forceinline__ T *ss__at(const ss__fw_view &v, uint32_t i, uint32_t j, uint64_t &pitch)
{
        const uint32_t li = i - v.i0, lj = j - v.j0;
        if (li - v.k0 < v.kn) {
                pitch = v.rp;
                return static_cast<T *>(v.r) + (uint64_t)(li - v.k0) * v.rp + lj;
        }
        pitch = v.cp;
        return static_cast<T *>(v.c) + (uint64_t)li * v.cp + (lj - v.k0);
}

__device__ __forceinline__ uint32_t *ss__at_succ(const ss__fw_view &v, uint32_t i, uint32_t j)
{
        const uint32_t li = i - v.i0, lj = j - v.j0;
        if (li - v.k0 < v.kn)
                return v.rs + (uint64_t)(li - v.k0) * v.rp + lj;
        return v.cs + (uint64_t)li * v.cp + (lj - v.k0);
}

__device__ __forceinline__ uint32_t ss__tile(const ss__fw_range &r, uint32_t t)
{
        const uint32_t x = r.base + t;
        return x >= r.skip_at ? x + r.skip_len : x;
}

__device__ __forceinline__ uint32_t ss__addmin(uint32_t a, uint32_t b, uint32_t c)
{
        return __viaddmin_u32(a, b, c);
}

__device__ __forceinline__ u64 ss__addmin(u64 a, u64 b, u64 c)
{
        const u64 s = a + b;
        return s < c ? s : c;
}

/* N consecutive entries moved as 16-byte (or 8-byte) vectors of the
 * entries' own type, so no value is read through another type. The
 * addresses are aligned: every pitch and tile offset is a multiple of the
 * block. */
template <int N> __device__ __forceinline__ void ss__ldv(const uint32_t *p, uint32_t *out)
{
        SS__FW_ALIGNED(p, N % 4 == 0 ? 16 : N == 2 ? 8 : 4);
        if constexpr (N % 4 == 0) {
                SS__UNROLL
                for (int q = 0; q < N / 4; q++) {
                        const uint4 x = reinterpret_cast<const uint4 *>(p)[q];
                        out[4 * q] = x.x;
                        out[4 * q + 1] = x.y;
                        out[4 * q + 2] = x.z;
                        out[4 * q + 3] = x.w;
                }
        } else if constexpr (N == 2) {
                const uint2 x = *reinterpret_cast<const uint2 *>(p);
                out[0] = x.x;
                out[1] = x.y;
        } else {
                SS__UNROLL
                for (int e = 0; e < N; e++)
                        out[e] = p[e];
        }
}

template <int N> __device__ __forceinline__ void ss__ldv(const u64 *p, u64 *out)
{
        static_assert(N % 2 == 0, "pairs of 64-bit entries");
        SS__FW_ALIGNED(p, 16);
        SS__UNROLL
        for (int q = 0; q < N / 2; q++) {
                const ulonglong2 x = reinterpret_cast<const ulonglong2 *>(p)[q];
                out[2 * q] = x.x;
                out[2 * q + 1] = x.y;
        }
}

template <int N> __device__ __forceinline__ void ss__stv(uint32_t *p, const uint32_t *in)
{
        SS__FW_ALIGNED(p, N % 4 == 0 ? 16 : N == 2 ? 8 : 4);
        if constexpr (N % 4 == 0) {
                SS__UNROLL
                for (int q = 0; q < N / 4; q++)
                        reinterpret_cast<uint4 *>(p)[q] =
                            make_uint4(in[4 * q], in[4 * q + 1], in[4 * q + 2], in[4 * q + 3]);
        } else if constexpr (N == 2) {
                *reinterpret_cast<uint2 *>(p) = make_uint2(in[0], in[1]);
        } else {
                SS__UNROLL
                for (int e = 0; e < N; e++)
                        p[e] = in[e];
        }
}

template <int N> __device__ __forceinline__ void ss__stv(u64 *p, const u64 *in)
{
        static_assert(N % 2 == 0, "pairs of 64-bit entries");
        SS__FW_ALIGNED(p, 16);
        SS__UNROLL
        for (int q = 0; q < N / 2; q++)
                reinterpret_cast<ulonglong2 *>(p)[q] = make_ulonglong2(in[2 * q], in[2 * q + 1]);
}

/* 16-bit entries travel as words of two (entry 2q in the low half): N
 * consecutive entries are loaded as vectors of their own type and packed
 * into N / 2 words, or unpacked and stored. */
template <int N> __device__ __forceinline__ void ss__ld16(const uint16_t *p, uint32_t *w)
{
        static_assert(N == 2 || N % 4 == 0, "pairs or quads of 16-bit entries");
        if constexpr (N == 2) {
                SS__FW_ALIGNED(p, 4);
                const ushort2 x = *reinterpret_cast<const ushort2 *>(p);
                w[0] = (uint32_t)x.x | (uint32_t)x.y << 16;
        } else {
                SS__FW_ALIGNED(p, 8);
                SS__UNROLL
                for (int q = 0; q < N / 4; q++) {
                        const ushort4 x = reinterpret_cast<const ushort4 *>(p)[q];
                        w[2 * q] = (uint32_t)x.x | (uint32_t)x.y << 16;
                        w[2 * q + 1] = (uint32_t)x.z | (uint32_t)x.w << 16;
                }
        }
}

template <int N> __device__ __forceinline__ void ss__st16(uint16_t *p, const uint32_t *w)
{
        static_assert(N == 2 || N % 4 == 0, "pairs or quads of 16-bit entries");
        if constexpr (N == 2) {
                SS__FW_ALIGNED(p, 4);
                *reinterpret_cast<ushort2 *>(p) =
                    make_ushort2((uint16_t)w[0], (uint16_t)(w[0] >> 16));
        } else {
                SS__FW_ALIGNED(p, 8);
                SS__UNROLL
                for (int q = 0; q < N / 4; q++)
                        reinterpret_cast<ushort4 *>(p)[q] =
                            make_ushort4((uint16_t)w[2 * q], (uint16_t)(w[2 * q] >> 16),
                                         (uint16_t)w[2 * q + 1], (uint16_t)(w[2 * q + 1] >> 16));
        }
}

/* ---- phase 1 ---------------------------------------------------------- */

/* Within round k a tile's row k and column k do not change (d(k, k) = 0;
 * the padding is infinite throughout), so one barrier per k suffices, and
 * the successor of (i, k) that an improved (i, j) copies is stable too. */
template <typename T, int B>
__global__ void __launch_bounds__(SS__DIAG_THREADS)
    ss__fw_diag_kernel(ss__fw_view v, uint32_t kb, int paths)
{
        T *d = reinterpret_cast<T *>(SS__FW_SMEM());
        uint64_t p;
        const uint32_t o = kb * B;
        T *g = ss__at<T>(v, o, o, p);
        uint32_t *gs = paths ? ss__at_succ(v, o, o) : nullptr;
        for (uint32_t e = threadIdx.x; e < B * B; e += blockDim.x)
                d[e] = g[(e / B) * p + e % B];
        __syncthreads();
        for (uint32_t k = 0; k < B; k++) {
                for (uint32_t e = threadIdx.x; e < B * B; e += blockDim.x) {
                        const uint32_t i = e / B, j = e % B;
                        const T cand = d[i * B + k] + d[k * B + j];
                        if (cand < d[e]) {
                                d[e] = cand;
                                if (paths)
                                        gs[i * p + j] = gs[i * p + k];
                        }
                }
                __syncthreads();
        }
        for (uint32_t e = threadIdx.x; e < B * B; e += blockDim.x)
                g[(e / B) * p + e % B] = d[e];
}

/* ---- phase 2 ---------------------------------------------------------- */

/* blockIdx.y 0: tile (kb, t), k running down its own rows, the diagonal
 * tile on the left; 1: tile (t, kb), k along its own columns, the diagonal
 * tile below. The tile sits in shared memory; the diagonal tile is only
 * read. */
template <typename T, int B>
__global__ void __launch_bounds__(SS__PANEL_THREADS)
    ss__fw_panel_kernel(ss__fw_view v, uint32_t kb, int paths)
{
        T *c = reinterpret_cast<T *>(SS__FW_SMEM());
        const uint32_t t = blockIdx.x + (blockIdx.x >= kb ? 1u : 0u);
        const bool row = blockIdx.y == 0;
        const uint32_t gi = (row ? kb : t) * B, gj = (row ? t : kb) * B;
        uint64_t pc, pd;
        T *gc = ss__at<T>(v, gi, gj, pc);
        const T *gd = ss__at<T>(v, kb * B, kb * B, pd);
        uint32_t *sc = paths ? ss__at_succ(v, gi, gj) : nullptr;
        const uint32_t *sd = paths ? ss__at_succ(v, kb * B, kb * B) : nullptr;
        for (uint32_t e = threadIdx.x; e < B * B; e += blockDim.x)
                c[e] = gc[(e / B) * pc + e % B];
        __syncthreads();
        if (row) {
                for (uint32_t k = 0; k < B; k++) {
                        for (uint32_t e = threadIdx.x; e < B * B; e += blockDim.x) {
                                const uint32_t i = e / B, j = e % B;
                                const T cand = gd[i * pd + k] + c[k * B + j];
                                if (cand < c[e]) {
                                        c[e] = cand;
                                        if (paths)
                                                sc[i * pc + j] = sd[i * pd + k];
                                }
                        }
                        __syncthreads();
                }
        } else {
                for (uint32_t k = 0; k < B; k++) {
                        for (uint32_t e = threadIdx.x; e < B * B; e += blockDim.x) {
                                const uint32_t i = e / B, j = e % B;
                                const T cand = c[i * B + k] + gd[k * pd + j];
                                if (cand < c[e]) {
                                        c[e] = cand;
                                        if (paths)
                                                sc[i * pc + j] = sc[i * pc + k];
                                }
                        }
                        __syncthreads();
                }
        }
        for (uint32_t e = threadIdx.x; e < B * B; e += blockDim.x)
                gc[(e / B) * pc + e % B] = c[e];
}

/* ---- phase 3 ---------------------------------------------------------- */

/* Entry e (0 .. B/16 - 1) of thread t along one axis of a minplus tile: the
 * axis in two halves, each thread holding B/32 neighbours in each, so that
 * its shared-memory reads are vectors without bank conflicts. */
template <int B> __device__ __forceinline__ uint32_t ss__mp_at(int e, uint32_t t)
{
        constexpr int TH = B / 32, HALF = B / 2;
        return (e / TH) * HALF + t * TH + e % TH;
}

template <typename T, int B> constexpr int ss__mp_min_blocks()
{
        /* Registers: (B/16)^2 accumulators of T per thread. */
        return sizeof(T) == 4 ? (B == 128 ? 2 : 4) : (B == 128 ? 1 : 2);
}

template <typename T, int B>
__global__ void __launch_bounds__(SS__MP_THREADS, (ss__mp_min_blocks<T, B>()))
    ss__fw_minplus_kernel(ss__fw_view C, ss__fw_view A, ss__fw_view Bv, ss__fw_range rows,
                          ss__fw_range cols, uint32_t k0, uint32_t klen, uint32_t shift, int paths)
{
        constexpr int TM = B / 16; /* entries per thread along each axis */
        constexpr int TH = TM / 2; /* per half */
        constexpr int HALF = B / 2;
        constexpr int VW = 16 / sizeof(T);            /* entries per 16-byte vector */
        T *As = reinterpret_cast<T *>(SS__FW_SMEM()); /* [SS__KC][B], k-major */
        T *Bs = As + SS__KC * B;                      /* [SS__KC][B] */
        const uint32_t tx = threadIdx.x % 16, ty = threadIdx.x / 16;
        const uint32_t gi = ss__tile(rows, blockIdx.y) * B, gj = ss__tile(cols, blockIdx.x) * B;
        uint64_t pc, pa, pb;
        T *gc = ss__at<T>(C, gi, gj, pc);
        const T *ga = ss__at<T>(A, gi, k0, pa);
        const T *gb = ss__at<T>(Bv, k0, gj, pb);
        uint32_t *sc = paths ? ss__at_succ(C, gi, gj) : nullptr;
        const uint32_t *sa = paths ? ss__at_succ(A, gi, k0) : nullptr;
        const T mask = ((T)1 << shift) - 1;
        /* Tags number the k of a window of as many chunks as the tag bits
         * count (tag 0 is the entry's own value), and are resolved after
         * each window and at the end: the fewer windows, the fewer
         * successor writes. Ties still go to the smallest k. */
        const uint32_t window = paths ? ((1u << shift) - 1) / SS__KC * SS__KC : SS__KC;

        /* Row r of the thread: ss__mp_at<B>(r, ty); columns
         * the same with tx. */
        T acc[TM][TM];
        SS__UNROLL
        for (int r = 0; r < TM; r++) {
                const uint32_t i = ss__mp_at<B>(r, ty);
                SS__UNROLL
                for (int h = 0; h < 2; h++)
                        ss__ldv<TH>(gc + i * pc + h * HALF + tx * TH, &acc[r][h * TH]);
        }

        for (uint32_t kc = 0; kc < klen; kc += SS__KC) {
                __syncthreads(); /* the previous chunk is consumed */
                /* A: 16-byte pieces along k of one row; a warp takes 32 rows,
                 * so its transposed stores hit 32 banks. */
                for (uint32_t e = threadIdx.x; e < B * (SS__KC / VW); e += SS__MP_THREADS) {
                        const uint32_t r = e % B, kq = e / B;
                        T x[VW];
                        ss__ldv<VW>(ga + r * pa + kc + kq * VW, x);
                        SS__UNROLL
                        for (int q = 0; q < VW; q++)
                                As[(kq * VW + q) * B + r] = x[q];
                }
                /* B: rows of the chunk with their tags, k + 1 within the chunk. */
                for (uint32_t e = threadIdx.x; e < SS__KC * (B / VW); e += SS__MP_THREADS) {
                        const uint32_t k = e / (B / VW), cq = e % (B / VW);
                        T x[VW];
                        ss__ldv<VW>(gb + (uint64_t)(kc + k) * pb + cq * VW, x);
                        const T tag = paths ? (T)(kc % window + k + 1) : (T)0;
                        SS__UNROLL
                        for (int q = 0; q < VW; q++)
                                x[q] += tag;
                        ss__stv<VW>(Bs + k * B + cq * VW, x);
                }
                __syncthreads();
                SS__UNROLL
                for (int k = 0; k < SS__KC; k++) {
                        T a[TM], b[TM];
                        SS__UNROLL
                        for (int h = 0; h < 2; h++) {
                                ss__ldv<TH>(As + k * B + h * HALF + ty * TH, &a[h * TH]);
                                ss__ldv<TH>(Bs + k * B + h * HALF + tx * TH, &b[h * TH]);
                        }
                        SS__UNROLL
                        for (int r = 0; r < TM; r++)
                                SS__UNROLL
                        for (int c = 0; c < TM; c++)
                                acc[r][c] = ss__addmin(a[r], b[c], acc[r][c]);
                }
                if (!paths || ((kc + SS__KC) % window != 0 && kc + SS__KC < klen))
                        continue;
                const uint32_t kw = kc - kc % window; /* the window's first k */
                /* Tags to successors: rare after the first rounds, so test
                 * all entries at once first. */
                T any = 0;
                SS__UNROLL
                for (int r = 0; r < TM; r++)
                        SS__UNROLL
                for (int c = 0; c < TM; c++)
                        any |= acc[r][c];
                if (!(any & mask))
                        continue;
                SS__UNROLL
                for (int r = 0; r < TM; r++) {
                        const uint32_t i = ss__mp_at<B>(r, ty);
                        SS__UNROLL
                        for (int c = 0; c < TM; c++) {
                                const T tag = acc[r][c] & mask;
                                if (tag) {
                                        const uint32_t j = ss__mp_at<B>(c, tx);
                                        acc[r][c] -= tag;
                                        sc[i * pc + j] = sa[i * pa + kw + (uint32_t)tag - 1];
                                }
                        }
                }
        }

        SS__UNROLL
        for (int r = 0; r < TM; r++) {
                const uint32_t i = ss__mp_at<B>(r, ty);
                SS__UNROLL
                for (int h = 0; h < 2; h++)
                        ss__stv<TH>(gc + i * pc + h * HALF + tx * TH, &acc[r][h * TH]);
        }
}

/* The same product on 16-bit entries, two to a 32-bit word: one
 * __viaddmin_u16x2 updates two neighbouring entries of a row, so each
 * instruction does twice the work of the 32-bit kernel's (the integer
 * pipe issues both at the same rate). The thread's entries are those of
 * ss__fw_minplus_kernel; its accumulators hold them in pairs along the row.
 * The A chunk is staged with each value in both halves of a word, the B
 * chunk in pairs with its tags; the inner loop is shared-memory loads and
 * adds-and-mins only. No half can carry into the other: a stored value is
 * at most the infinity, below 2^15, so two of them and a tag stay below
 * 2^16. Tags and ties follow the 32-bit kernel, so both give the same
 * matrix and successors. */
template <int B>
__global__ void __launch_bounds__(SS__MP_THREADS, (B == 128 ? 3 : 4))
    ss__fw_minplus16_kernel(ss__fw_view C, ss__fw_view A, ss__fw_view Bv, ss__fw_range rows,
                            ss__fw_range cols, uint32_t k0, uint32_t klen, uint32_t shift,
                            int paths)
{
        constexpr int TM = B / 16; /* entries per thread along each axis */
        constexpr int TH = TM / 2; /* per half */
        constexpr int HALF = B / 2;
        constexpr int PW = TM / 2; /* words of pairs per thread row */
        constexpr int HW = TH / 2; /* per half */
        uint32_t *As = reinterpret_cast<uint32_t *>(SS__FW_SMEM()); /* [SS__KC][B], k-major */
        uint32_t *Bs = As + SS__KC * B;                             /* [SS__KC][B / 2] pairs */
        const uint32_t tx = threadIdx.x % 16, ty = threadIdx.x / 16;
        const uint32_t gi = ss__tile(rows, blockIdx.y) * B, gj = ss__tile(cols, blockIdx.x) * B;
        uint64_t pc, pa, pb;
        uint16_t *gc = ss__at<uint16_t>(C, gi, gj, pc);
        const uint16_t *ga = ss__at<uint16_t>(A, gi, k0, pa);
        const uint16_t *gb = ss__at<uint16_t>(Bv, k0, gj, pb);
        uint32_t *sc = paths ? ss__at_succ(C, gi, gj) : nullptr;
        const uint32_t *sa = paths ? ss__at_succ(A, gi, k0) : nullptr;
        const uint32_t mask1 = (1u << shift) - 1, mask = mask1 | mask1 << 16;
        const uint32_t window = paths ? ((1u << shift) - 1) / SS__KC * SS__KC : SS__KC;

        uint32_t acc[TM][PW];
        SS__UNROLL
        for (int r = 0; r < TM; r++) {
                const uint32_t i = ss__mp_at<B>(r, ty);
                SS__UNROLL
                for (int h = 0; h < 2; h++)
                        ss__ld16<TH>(gc + i * pc + h * HALF + tx * TH, &acc[r][h * HW]);
        }

        for (uint32_t kc = 0; kc < klen; kc += SS__KC) {
                __syncthreads(); /* the previous chunk is consumed */
                /* A: 8 entries along k of one row; a warp takes 32 rows, so
                 * its transposed stores hit 32 banks. */
                for (uint32_t e = threadIdx.x; e < B * (SS__KC / 8); e += SS__MP_THREADS) {
                        const uint32_t r = e % B, kq = e / B;
                        uint32_t x[4];
                        ss__ld16<8>(ga + r * pa + kc + kq * 8, x);
                        SS__UNROLL
                        for (int q = 0; q < 4; q++) {
                                As[(kq * 8 + 2 * q) * B + r] = (x[q] & 0xffffu) * 0x10001u;
                                As[(kq * 8 + 2 * q + 1) * B + r] = (x[q] >> 16) * 0x10001u;
                        }
                }
                /* B: rows of the chunk in pairs, with their tags. */
                for (uint32_t e = threadIdx.x; e < SS__KC * (B / 8); e += SS__MP_THREADS) {
                        const uint32_t k = e / (B / 8), cq = e % (B / 8);
                        uint32_t x[4];
                        ss__ld16<8>(gb + (uint64_t)(kc + k) * pb + cq * 8, x);
                        const uint32_t tag = paths ? (kc % window + k + 1) * 0x10001u : 0u;
                        SS__UNROLL
                        for (int q = 0; q < 4; q++)
                                x[q] += tag; /* no carry: each half stays below 2^16 */
                        ss__stv<4>(Bs + k * (B / 2) + cq * 4, x);
                }
                __syncthreads();
                SS__UNROLL
                for (int k = 0; k < SS__KC; k++) {
                        uint32_t a[TM], b[PW];
                        SS__UNROLL
                        for (int h = 0; h < 2; h++) {
                                ss__ldv<TH>(As + k * B + h * HALF + ty * TH, &a[h * TH]);
                                ss__ldv<HW>(Bs + k * (B / 2) + h * (HALF / 2) + tx * HW,
                                            &b[h * HW]);
                        }
                        SS__UNROLL
                        for (int r = 0; r < TM; r++)
                                SS__UNROLL
                        for (int c = 0; c < PW; c++)
                                acc[r][c] = __viaddmin_u16x2(a[r], b[c], acc[r][c]);
                }
                if (!paths || ((kc + SS__KC) % window != 0 && kc + SS__KC < klen))
                        continue;
                const uint32_t kw = kc - kc % window;
                uint32_t any = 0;
                SS__UNROLL
                for (int r = 0; r < TM; r++)
                        SS__UNROLL
                for (int c = 0; c < PW; c++)
                        any |= acc[r][c];
                if (!(any & mask))
                        continue;
                SS__UNROLL
                for (int r = 0; r < TM; r++) {
                        const uint32_t i = ss__mp_at<B>(r, ty);
                        SS__UNROLL
                        for (int c = 0; c < PW; c++) {
                                SS__UNROLL
                                for (int e = 0; e < 2; e++) {
                                        const uint32_t tag = (acc[r][c] >> (16 * e)) & mask1;
                                        if (tag) {
                                                const int x = 2 * c + e; /* the entry's index */
                                                const uint32_t j = ss__mp_at<B>(x, tx);
                                                acc[r][c] -= tag << (16 * e);
                                                sc[i * pc + j] = sa[i * pa + kw + tag - 1];
                                        }
                                }
                        }
                }
        }

        SS__UNROLL
        for (int r = 0; r < TM; r++) {
                const uint32_t i = ss__mp_at<B>(r, ty);
                SS__UNROLL
                for (int h = 0; h < 2; h++)
                        ss__st16<TH>(gc + i * pc + h * HALF + tx * TH, &acc[r][h * HW]);
        }
}

/* ---- launchers -------------------------------------------------------- */

template <typename T, int B> constexpr size_t ss__tile_smem()
{
        return (size_t)B * B * sizeof(T);
}

template <typename T, int B> constexpr size_t ss__mp_smem()
{
        /* 16-bit: A as words holding each value twice, B in pairs. */
        if constexpr (sizeof(T) == 2)
                return (size_t)SS__KC * B * 4 + (size_t)SS__KC * (B / 2) * 4;
        else
                return (size_t)2 * SS__KC * B * sizeof(T);
}

template <typename T, int B> constexpr const void *ss__mp_fn()
{
        if constexpr (sizeof(T) == 2)
                return (const void *)&ss__fw_minplus16_kernel<B>;
        else
                return (const void *)&ss__fw_minplus_kernel<T, B>;
}

template <typename T, int B> int ss__prepare_t(struct ss_err *err)
{
        SS__CUDA(cudaFuncSetAttribute((const void *)&ss__fw_diag_kernel<T, B>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)ss__tile_smem<T, B>()));
        SS__CUDA(cudaFuncSetAttribute((const void *)&ss__fw_panel_kernel<T, B>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)ss__tile_smem<T, B>()));
        SS__CUDA(cudaFuncSetAttribute(ss__mp_fn<T, B>(),
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)ss__mp_smem<T, B>()));
        return SS_OK;
}

template <typename T, int B>
int ss__diag_t(const ss__fw_cfg *c, const ss__fw_view *v, uint32_t kb, cudaStream_t s,
               struct ss_err *err)
{
        /* Template arguments hold commas: name them before the macro. */
        auto kernel = &ss__fw_diag_kernel<T, B>;
        const size_t smem = ss__tile_smem<T, B>();
        SS__FW_LAUNCH(kernel, dim3(1), dim3(SS__DIAG_THREADS), smem, s, *v, kb, (int)c->paths);
        SS__LAUNCHED("ss__fw_diag_kernel");
        return SS_OK;
}

template <typename T, int B>
int ss__panels_t(const ss__fw_cfg *c, const ss__fw_view *v, uint32_t kb, uint32_t nt,
                 cudaStream_t s, struct ss_err *err)
{
        auto kernel = &ss__fw_panel_kernel<T, B>;
        const size_t smem = ss__tile_smem<T, B>();
        SS__FW_LAUNCH(kernel, dim3(nt - 1, 2), dim3(SS__PANEL_THREADS), smem, s, *v, kb,
                      (int)c->paths);
        SS__LAUNCHED("ss__fw_panel_kernel");
        return SS_OK;
}

template <typename T, int B>
int ss__minplus_t(const ss__fw_cfg *c, const ss__fw_view *C, const ss__fw_view *A,
                  const ss__fw_view *Bv, ss__fw_range rows, ss__fw_range cols, uint32_t k0,
                  uint32_t klen, cudaStream_t s, struct ss_err *err)
{
        const size_t smem = ss__mp_smem<T, B>();
        if constexpr (sizeof(T) == 2) {
                auto kernel = &ss__fw_minplus16_kernel<B>;
                SS__FW_LAUNCH(kernel, dim3(cols.count, rows.count), dim3(SS__MP_THREADS), smem, s,
                              *C, *A, *Bv, rows, cols, k0, klen, c->shift, (int)c->paths);
                SS__LAUNCHED("ss__fw_minplus16_kernel");
        } else {
                auto kernel = &ss__fw_minplus_kernel<T, B>;
                SS__FW_LAUNCH(kernel, dim3(cols.count, rows.count), dim3(SS__MP_THREADS), smem, s,
                              *C, *A, *Bv, rows, cols, k0, klen, c->shift, (int)c->paths);
                SS__LAUNCHED("ss__fw_minplus_kernel");
        }
        return SS_OK;
}

int ss__fw_check(const ss__fw_cfg *c, struct ss_err *err)
{
        if ((c->width != 2 && c->width != 4 && c->width != 8) ||
            (c->block != 64 && c->block != 128))
                return ss_err_set(
                    err, SS_EINVAL,
                    "GPU Floyd-Warshall: width %u and block %u (2, 4 or 8; 64 or 128)", c->width,
                    c->block);
        if (c->width == 2 && c->shift > 14)
                return ss_err_set(err, SS_EINVAL,
                                  "GPU Floyd-Warshall: 16-bit entries hold at most 14 tag bits, "
                                  "not %u",
                                  c->shift);
        if (c->paths && (c->shift < 7 || c->shift > 16))
                return ss_err_set(err, SS_EINVAL,
                                  "GPU Floyd-Warshall: paths need 7 to 16 tag bits, not %u",
                                  c->shift);
        return SS_OK;
}

} /* namespace */

/* Calls fn<T, B>(args) for the configuration's width and block. */
#define SS__FW_DISPATCH(c, fn, ...)                                                                \
        ((c)->width == 2 ? ((c)->block == 128 ? fn<uint16_t, 128>(__VA_ARGS__)                     \
                                              : fn<uint16_t, 64>(__VA_ARGS__))                     \
         : (c)->width == 4                                                                         \
             ? ((c)->block == 128 ? fn<uint32_t, 128>(__VA_ARGS__)                                 \
                                  : fn<uint32_t, 64>(__VA_ARGS__))                                 \
             : ((c)->block == 128 ? fn<u64, 128>(__VA_ARGS__) : fn<u64, 64>(__VA_ARGS__)))

extern "C" int ss__fw_prepare(const struct ss__fw_cfg *c, struct ss_err *err)
{
        int rc = ss__fw_check(c, err);
        return rc ? rc : SS__FW_DISPATCH(c, ss__prepare_t, err);
}

extern "C" int ss__fw_diag(const struct ss__fw_cfg *c, const struct ss__fw_view *v, uint32_t kb,
                           cudaStream_t s, struct ss_err *err)
{
        int rc = ss__fw_check(c, err);
        return rc ? rc : SS__FW_DISPATCH(c, ss__diag_t, c, v, kb, s, err);
}

extern "C" int ss__fw_panels(const struct ss__fw_cfg *c, const struct ss__fw_view *v, uint32_t kb,
                             uint32_t nt, cudaStream_t s, struct ss_err *err)
{
        int rc = ss__fw_check(c, err);
        if (rc || nt < 2)
                return rc;
        return SS__FW_DISPATCH(c, ss__panels_t, c, v, kb, nt, s, err);
}

extern "C" int ss__fw_minplus(const struct ss__fw_cfg *c, const struct ss__fw_view *C,
                              const struct ss__fw_view *A, const struct ss__fw_view *B,
                              struct ss__fw_range rows, struct ss__fw_range cols, uint32_t k0,
                              uint32_t klen, cudaStream_t s, struct ss_err *err)
{
        int rc = ss__fw_check(c, err);
        if (rc || rows.count == 0 || cols.count == 0 || klen == 0)
                return rc;
        if (rows.count > 65535 || klen % c->block)
                return ss_err_set(err, SS_EINVAL,
                                  "GPU Floyd-Warshall: %u tile rows (at most 65535), k range %u "
                                  "(a multiple of %u)",
                                  rows.count, klen, c->block);
        return SS__FW_DISPATCH(c, ss__minplus_t, c, C, A, B, rows, cols, k0, klen, s, err);
}
