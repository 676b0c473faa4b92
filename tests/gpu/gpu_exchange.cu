/* gpu-exchange: how two devices best swap what each computed alone, peer
 * stores (what the split CCH sweep and the partitioned search do) against
 * NCCL (when the machine has it), measured in one run.
 *
 *   gpu-exchange [--n LIST] [--runs R] [--block B] [--seed S]
 *
 * For each n of LIST, devices 0 and 1 each hold n distances; the ids are
 * owned in runs of B (default 2048: about a subtree of the split sweep's
 * share on a road graph) given to the two devices at random, and each
 * device must receive the other's entries:
 *   - PEER: a kernel on each device stores its own entries straight into
 *     the other's array (peer access), as ss__ph_put does;
 *   - NCCL: each device packs its entries, ncclSend/ncclRecv swap them, and
 *     a kernel scatters what arrived.
 * Each is timed on the host from launch to both devices done, median of R
 * runs after one untimed, and its result checked entry by entry. Then the
 * latency of one ncclAllReduce of 4 counters (what the partitioned search
 * would need per phase in place of its in-kernel barrier) and of an empty
 * kernel launch on each device. NCCL is loaded at run time (libnccl.so.2);
 * without it the NCCL lines say so. One line per measure; exit 1 on a wrong
 * result, 77 without two devices with peer access. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

/* The few NCCL entry points used, by their stable C ABI (nccl.h): loaded
 * with dlopen so that neither the build nor the bundle needs NCCL. */
typedef struct ncclComm *nccl_comm;
typedef int nccl_result;
enum { NCCL_UINT64 = 5, NCCL_SUM = 0 };
struct nccl {
        nccl_result (*init_all)(nccl_comm *, int, const int *);
        nccl_result (*destroy)(nccl_comm);
        nccl_result (*group_start)(void);
        nccl_result (*group_end)(void);
        nccl_result (*send)(const void *, size_t, int, int, nccl_comm, cudaStream_t);
        nccl_result (*recv)(void *, size_t, int, int, nccl_comm, cudaStream_t);
        nccl_result (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm, cudaStream_t);
        const char *(*error)(nccl_result);
        int (*version)(int *);
};

static bool nccl_load(struct nccl *x, char *why, size_t len)
{
        void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                snprintf(why, len, "no NCCL: %s", dlerror());
                return false;
        }
        x->init_all = (nccl_result(*)(nccl_comm *, int, const int *))dlsym(h, "ncclCommInitAll");
        x->destroy = (nccl_result(*)(nccl_comm))dlsym(h, "ncclCommDestroy");
        x->group_start = (nccl_result(*)(void))dlsym(h, "ncclGroupStart");
        x->group_end = (nccl_result(*)(void))dlsym(h, "ncclGroupEnd");
        x->send = (nccl_result(*)(const void *, size_t, int, int, nccl_comm, cudaStream_t))dlsym(
            h, "ncclSend");
        x->recv =
            (nccl_result(*)(void *, size_t, int, int, nccl_comm, cudaStream_t))dlsym(h, "ncclRecv");
        x->all_reduce = (nccl_result(*)(const void *, void *, size_t, int, int, nccl_comm,
                                        cudaStream_t))dlsym(h, "ncclAllReduce");
        x->error = (const char *(*)(nccl_result))dlsym(h, "ncclGetErrorString");
        x->version = (int (*)(int *))dlsym(h, "ncclGetVersion");
        if (!x->init_all || !x->destroy || !x->group_start || !x->group_end || !x->send ||
            !x->recv || !x->all_reduce || !x->error || !x->version) {
                snprintf(why, len, "libnccl.so.2 lacks an entry point");
                return false;
        }
        return true;
}

#define CK(call)                                                                                   \
        do {                                                                                       \
                cudaError_t e_ = (call);                                                           \
                if (e_ != cudaSuccess) {                                                           \
                        fprintf(stderr, "gpu-exchange: %s: %s\n", #call, cudaGetErrorString(e_));  \
                        exit(2);                                                                   \
                }                                                                                  \
        } while (0)

__global__ void put_peer(const uint64_t *mine, uint64_t *theirs, const uint32_t *ids, uint64_t k)
{
        for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < k;
             i += (uint64_t)gridDim.x * blockDim.x)
                theirs[ids[i]] = mine[ids[i]];
}

__global__ void pack(const uint64_t *d, uint64_t *out, const uint32_t *ids, uint64_t k)
{
        for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < k;
             i += (uint64_t)gridDim.x * blockDim.x)
                out[i] = d[ids[i]];
}

__global__ void unpack(uint64_t *d, const uint64_t *in, const uint32_t *ids, uint64_t k)
{
        for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < k;
             i += (uint64_t)gridDim.x * blockDim.x)
                d[ids[i]] = in[i];
}

__global__ void nothing(void)
{
}

static uint64_t now_ns(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
        const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v, unsigned k)
{
        qsort(v, k, sizeof(*v), cmp_u64);
        return k ? (k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2) / 1e3 : 0;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* Device q's value of id v before the swap: only its own entries are right. */
static uint64_t value(uint32_t v, int q, bool own)
{
        return own ? (uint64_t)v * 2654435761u + 1 : 0xdeadull + (uint64_t)q;
}

struct side {
        uint64_t *d, *buf_out, *buf_in;
        uint32_t *ids;  /* the ids this device owns */
        uint64_t k;     /* how many */
        uint64_t *host; /* its array before the swap */
        cudaStream_t st;
};

static void reset(struct side *s, uint32_t n)
{
        for (int q = 0; q < 2; q++) {
                CK(cudaSetDevice(q));
                CK(cudaMemcpy(s[q].d, s[q].host, (size_t)n * 8, cudaMemcpyHostToDevice));
        }
        /* A copy from pageable memory may still be landing when cudaMemcpy
         * returns, and the other device's stores must come after it. */
        for (int q = 0; q < 2; q++) {
                CK(cudaSetDevice(q));
                CK(cudaDeviceSynchronize());
        }
}

static uint64_t check(struct side *s, uint32_t n, const uint8_t *owner)
{
        uint64_t bad = 0;
        uint64_t *got = (uint64_t *)malloc((size_t)n * 8);
        for (int q = 0; q < 2; q++) {
                CK(cudaSetDevice(q));
                CK(cudaMemcpy(got, s[q].d, (size_t)n * 8, cudaMemcpyDeviceToHost));
                for (uint32_t v = 0; v < n; v++)
                        bad += got[v] != value(v, owner[v], true);
        }
        free(got);
        return bad;
}

static void wait_both(struct side *s)
{
        for (int q = 0; q < 2; q++) {
                CK(cudaSetDevice(q));
                CK(cudaStreamSynchronize(s[q].st));
        }
}

int main(int argc, char **argv)
{
        uint32_t sizes[8] = {264346, 24055486};
        unsigned nsizes = 2, runs = 20, block = 2048;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--n")) {
                        nsizes = 0;
                        for (char *save = NULL, *t = strtok_r(argv[i + 1], ",", &save);
                             t && nsizes < 8; t = strtok_r(NULL, ",", &save))
                                sizes[nsizes++] = (uint32_t)strtoul(t, NULL, 10);
                } else if (!strcmp(argv[i], "--runs")) {
                        runs = (unsigned)strtoul(argv[i + 1], NULL, 10);
                } else if (!strcmp(argv[i], "--block")) {
                        block = (unsigned)strtoul(argv[i + 1], NULL, 10);
                } else if (!strcmp(argv[i], "--seed")) {
                        rng = strtoull(argv[i + 1], NULL, 10) | 1;
                } else {
                        fprintf(stderr, "usage: gpu-exchange [--n LIST] [--runs R] [--block B] "
                                        "[--seed S]\n");
                        return 2;
                }
        }
        if (!runs || !block || !nsizes) {
                fprintf(stderr, "gpu-exchange: --runs, --block and --n need positive values\n");
                return 2;
        }
        int count = 0, can01 = 0, can10 = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
                printf("SKIP: needs two devices (%d)\n", count);
                return 77;
        }
        CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
        CK(cudaDeviceCanAccessPeer(&can10, 1, 0));
        if (!can01 || !can10) {
                printf("SKIP: devices 0 and 1 cannot reach each other's memory\n");
                return 77;
        }
        for (int q = 0; q < 2; q++) {
                CK(cudaSetDevice(q));
                cudaError_t e = cudaDeviceEnablePeerAccess(1 - q, 0);
                if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
                        CK(e);
                cudaGetLastError();
        }
        struct nccl nc = {};
        char why[256] = "";
        nccl_comm comm[2] = {NULL, NULL};
        bool have_nccl = nccl_load(&nc, why, sizeof(why));
        if (have_nccl) {
                const int devs[2] = {0, 1};
                int ver = 0;
                nc.version(&ver);
                nccl_result r = nc.init_all(comm, 2, devs);
                if (r != 0) {
                        snprintf(why, sizeof(why), "ncclCommInitAll: %s", nc.error(r));
                        have_nccl = false;
                } else {
                        printf("NCCL version %d\n", ver);
                }
        }
        if (!have_nccl)
                printf("NCCL not used: %s\n", why);
        int status = 0;
        uint64_t *t = (uint64_t *)malloc((size_t)(runs > 1000 ? runs : 1000) * 8);
        for (unsigned si = 0; si < nsizes; si++) {
                const uint32_t n = sizes[si];
                uint8_t *owner = (uint8_t *)malloc(n ? n : 1);
                struct side s[2];
                memset(s, 0, sizeof(s));
                for (uint32_t v = 0; v < n; v += block) {
                        const uint8_t q = (uint8_t)(rnd() & 1);
                        for (uint32_t u = v; u < n && u - v < block; u++)
                                owner[u] = q;
                }
                for (int q = 0; q < 2; q++) {
                        uint32_t *ids = (uint32_t *)malloc((size_t)(n ? n : 1) * 4);
                        s[q].host = (uint64_t *)malloc((size_t)(n ? n : 1) * 8);
                        for (uint32_t v = 0; v < n; v++) {
                                const bool own = owner[v] == q;
                                s[q].host[v] = value(v, q, own);
                                if (own)
                                        ids[s[q].k++] = v;
                        }
                        CK(cudaSetDevice(q));
                        CK(cudaStreamCreateWithFlags(&s[q].st, cudaStreamNonBlocking));
                        CK(cudaMalloc((void **)&s[q].d, (size_t)(n ? n : 1) * 8));
                        CK(cudaMalloc((void **)&s[q].ids, (size_t)(s[q].k ? s[q].k : 1) * 4));
                        CK(cudaMemcpy(s[q].ids, ids, (size_t)s[q].k * 4, cudaMemcpyHostToDevice));
                        free(ids);
                }
                for (int q = 0; q < 2; q++) {
                        CK(cudaSetDevice(q));
                        CK(cudaMalloc((void **)&s[q].buf_out, (size_t)(s[q].k ? s[q].k : 1) * 8));
                        CK(cudaMalloc((void **)&s[q].buf_in,
                                      (size_t)(s[1 - q].k ? s[1 - q].k : 1) * 8));
                }
                /* PEER */
                uint64_t bad = 0;
                for (unsigned r = 0; r <= runs; r++) {
                        reset(s, n);
                        const uint64_t t0 = now_ns();
                        for (int q = 0; q < 2; q++) {
                                CK(cudaSetDevice(q));
                                if (s[q].k)
                                        put_peer<<<1024, 256, 0, s[q].st>>>(s[q].d, s[1 - q].d,
                                                                            s[q].ids, s[q].k);
                        }
                        wait_both(s);
                        if (r)
                                t[r - 1] = now_ns() - t0;
                        CK(cudaGetLastError());
                        if (r == runs)
                                bad = check(s, n, owner);
                }
                printf("PEER n=%u block=%u own=%" PRIu64 "+%" PRIu64 " bytes=%" PRIu64
                       " mismatches=%" PRIu64 " us=%.1f\n",
                       n, block, s[0].k, s[1].k, (uint64_t)n * 8, bad, median_us(t, runs));
                status |= bad != 0;
                /* NCCL */
                if (have_nccl) {
                        bad = 0;
                        bool failed = false;
                        for (unsigned r = 0; r <= runs && !failed; r++) {
                                reset(s, n);
                                const uint64_t t0 = now_ns();
                                for (int q = 0; q < 2; q++) {
                                        CK(cudaSetDevice(q));
                                        if (s[q].k)
                                                pack<<<1024, 256, 0, s[q].st>>>(
                                                    s[q].d, s[q].buf_out, s[q].ids, s[q].k);
                                }
                                nccl_result e = nc.group_start();
                                for (int q = 0; q < 2 && e == 0; q++) {
                                        e = nc.send(s[q].buf_out, s[q].k, NCCL_UINT64, 1 - q,
                                                    comm[q], s[q].st);
                                        if (e == 0)
                                                e = nc.recv(s[q].buf_in, s[1 - q].k, NCCL_UINT64,
                                                            1 - q, comm[q], s[q].st);
                                }
                                const nccl_result e2 = nc.group_end();
                                if (e || e2) {
                                        printf("NCCL n=%u error: %s\n", n, nc.error(e ? e : e2));
                                        failed = true;
                                        break;
                                }
                                for (int q = 0; q < 2; q++) {
                                        CK(cudaSetDevice(q));
                                        if (s[1 - q].k)
                                                unpack<<<1024, 256, 0, s[q].st>>>(
                                                    s[q].d, s[q].buf_in, s[1 - q].ids, s[1 - q].k);
                                }
                                wait_both(s);
                                if (r)
                                        t[r - 1] = now_ns() - t0;
                                CK(cudaGetLastError());
                                if (r == runs)
                                        bad = check(s, n, owner);
                        }
                        if (!failed)
                                printf("NCCL n=%u block=%u own=%" PRIu64 "+%" PRIu64
                                       " mismatches=%" PRIu64 " us=%.1f\n",
                                       n, block, s[0].k, s[1].k, bad, median_us(t, runs));
                        status |= bad != 0 || failed;
                }
                for (int q = 0; q < 2; q++) {
                        CK(cudaSetDevice(q));
                        cudaFree(s[q].d);
                        cudaFree(s[q].ids);
                        cudaFree(s[q].buf_out);
                        cudaFree(s[q].buf_in);
                        cudaStreamDestroy(s[q].st);
                        free(s[q].host);
                }
                free(owner);
        }
        /* Per-phase costs: an empty launch on each device, waited for, and
         * one all-reduce of 4 counters over both. */
        cudaStream_t st[2];
        uint64_t *cnt[2];
        for (int q = 0; q < 2; q++) {
                CK(cudaSetDevice(q));
                CK(cudaStreamCreateWithFlags(&st[q], cudaStreamNonBlocking));
                CK(cudaMalloc((void **)&cnt[q], 64));
                CK(cudaMemset(cnt[q], 0, 64));
        }
        const unsigned reps = 1000;
        for (unsigned r = 0; r <= reps; r++) {
                const uint64_t t0 = now_ns();
                for (int q = 0; q < 2; q++) {
                        CK(cudaSetDevice(q));
                        nothing<<<1, 32, 0, st[q]>>>();
                }
                for (int q = 0; q < 2; q++) {
                        CK(cudaSetDevice(q));
                        CK(cudaStreamSynchronize(st[q]));
                }
                if (r)
                        t[r - 1] = now_ns() - t0;
        }
        printf("LAUNCH devices=2 us=%.1f (an empty kernel on each, waited for)\n",
               median_us(t, reps));
        if (have_nccl) {
                bool failed = false;
                for (unsigned r = 0; r <= reps && !failed; r++) {
                        const uint64_t t0 = now_ns();
                        nccl_result e = nc.group_start();
                        for (int q = 0; q < 2 && e == 0; q++)
                                e = nc.all_reduce(cnt[q], cnt[q] + 4, 4, NCCL_UINT64, NCCL_SUM,
                                                  comm[q], st[q]);
                        const nccl_result e2 = nc.group_end();
                        if (e || e2) {
                                printf("ALLREDUCE error: %s\n", nc.error(e ? e : e2));
                                failed = true;
                                status = 1;
                                break;
                        }
                        for (int q = 0; q < 2; q++) {
                                CK(cudaSetDevice(q));
                                CK(cudaStreamSynchronize(st[q]));
                        }
                        if (r)
                                t[r - 1] = now_ns() - t0;
                }
                if (!failed)
                        printf("ALLREDUCE devices=2 count=4 us=%.1f (one ncclAllReduce, waited "
                               "for)\n",
                               median_us(t, reps));
                for (int q = 0; q < 2; q++)
                        nc.destroy(comm[q]);
        }
        free(t);
        return status;
}
