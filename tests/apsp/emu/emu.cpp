/* The CPU stand-in for a CUDA device (what it models: emu.h). */
#include "emu.h"

#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "core/error.h"
#include "cuda_emu.h"

ss_emu_dim ss_emu_thread_idx, ss_emu_block_idx, ss_emu_block_dim, ss_emu_grid_dim;

namespace
{

[[noreturn]] void die(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "emulated device: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
        abort();
}

struct Event {
        uint64_t recorded = 0, done = 0;
        uint64_t when = 0; /* the clock when the last record ran */
};

struct Op {
        std::function<void()> run;
        Event *wait = nullptr;
        uint64_t gen = 0; /* runnable when wait->done >= gen */
        uint64_t seq = 0; /* order of enqueueing */
};

struct Stream {
        std::deque<Op> q;
};

struct State {
        std::mt19937_64 rng{1};
        uint64_t mem_total = 1ull << 30, mem_used = 0, mem_max = 0;
        std::map<uintptr_t, size_t> allocs; /* device allocations: start -> size */
        std::map<uintptr_t, size_t> host;   /* registered host ranges */
        std::vector<Stream *> streams;
        std::map<const void *, int> smem_attr;
        cudaError_t last = cudaSuccess;
        uint64_t clock = 0, seq = 0;
        unsigned fail_malloc = 0, fail_launch = 0;
        bool no_device = false;
        struct ss_emu_stats stats {
        };
};

State &st()
{
        static State s;
        return s;
}

cudaError_t fail(cudaError_t e)
{
        st().last = e;
        return e;
}

/* ---- the progress engine ---------------------------------------------- */

bool runnable(const Stream *s)
{
        if (s->q.empty())
                return false;
        const Op &o = s->q.front();
        return !o.wait || o.wait->done >= o.gen;
}

/* Runs the first operation of one runnable stream; false when none is
 * runnable. Half the time the stream is random; the other half it is the
 * one whose next operation was queued last: a legal order (streams are
 * independent unless an event says otherwise) that lets later work overtake
 * earlier work, so a missing dependency shows. */
bool step()
{
        State &S = st();
        std::vector<Stream *> ready;
        for (Stream *s : S.streams)
                if (runnable(s))
                        ready.push_back(s);
        if (ready.empty())
                return false;
        Stream *s = ready[S.rng() % ready.size()];
        if (S.rng() % 2)
                for (Stream *x : ready)
                        if (x->q.front().seq > s->q.front().seq)
                                s = x;
        Op o = std::move(s->q.front());
        s->q.pop_front();
        if (getenv("SS_EMU_TRACE")) /* which stream ran what, for debugging */
                fprintf(
                    stderr, "emu: stream %zu runs operation %llu\n",
                    (size_t)(std::find(S.streams.begin(), S.streams.end(), s) - S.streams.begin()),
                    (unsigned long long)o.seq);
        S.clock++;
        if (o.run)
                o.run();
        return true;
}

template <typename F> void drain_until(F done)
{
        while (!done())
                if (!step())
                        die("deadlock: work is queued but no stream can run (a wait on an "
                            "event that is never reached)");
}

void drain_all()
{
        drain_until([] {
                for (Stream *s : st().streams)
                        if (!s->q.empty())
                                return false;
                return true;
        });
}

/* The device works while the host does, but lags behind it, as a real one
 * does under a stream of launches: now and then a few queued operations
 * run at a call into the runtime; the rest wait for a synchronisation. */
void jitter()
{
        if (st().rng() % 8)
                return;
        const unsigned k = 1 + st().rng() % 4;
        for (unsigned i = 0; i < k && step(); i++)
                ;
}

Stream *stream_of(cudaStream_t s)
{
        return reinterpret_cast<Stream *>(s);
}

/* Queues op on s; the legacy default stream (0) runs it at once, after
 * everything queued. */
void enqueue(cudaStream_t s, Op op)
{
        if (!s) {
                drain_all();
                st().clock++;
                if (op.wait && op.wait->done < op.gen)
                        die("the default stream waits for an event that has not run");
                op.run();
                return;
        }
        op.seq = ++st().seq;
        stream_of(s)->q.push_back(std::move(op));
}

/* ---- memory checks ----------------------------------------------------- */

/* True when [p, p + len) lies in one device allocation. */
bool in_device(const void *p, size_t len)
{
        const uintptr_t a = reinterpret_cast<uintptr_t>(p);
        auto &m = st().allocs;
        auto it = m.upper_bound(a);
        if (it == m.begin())
                return false;
        --it;
        return a >= it->first && a + len <= it->first + it->second;
}

bool in_registered(const void *p, size_t len)
{
        const uintptr_t a = reinterpret_cast<uintptr_t>(p);
        auto &m = st().host;
        auto it = m.upper_bound(a);
        if (it == m.begin())
                return false;
        --it;
        return a >= it->first && a + len <= it->first + it->second;
}

/* Checks one side of a copy: device memory must be inside an allocation,
 * and host memory inside a registered range when it starts in one. */
void check_side(const void *p, size_t extent, bool device, const char *what)
{
        if (extent == 0)
                return;
        if (device) {
                if (!in_device(p, extent))
                        die("%s: %zu bytes at %p are not inside one device allocation", what,
                            extent, p);
        } else {
                if (in_device(p, 1))
                        die("%s: a host pointer %p points into device memory", what, p);
                if (in_registered(p, 1) && !in_registered(p, extent))
                        die("%s: %zu bytes at %p run past a registered host range", what, extent,
                            p);
        }
}

/* ---- kernels ------------------------------------------------------------ */

/* Threads are coroutines. On x86-64 they switch with a few instructions
 * (swapcontext would make a system call for the signal mask every time);
 * elsewhere with ucontext. */
struct Fiber {
#if defined(__x86_64__)
        void *sp;
#else
        ucontext_t ctx;
#endif
        ss_emu_dim idx;
        bool done, at_barrier;
};

Fiber *current;
const std::function<void()> *current_body;
unsigned char *current_smem;
constexpr size_t FIBER_STACK = 128 * 1024;
char *stacks;
size_t stacks_count;

#if defined(__x86_64__)
extern "C" void ss_emu_switch(void **from, void *to);
/* Saves the callee-saved registers and the stack pointer in *from, and
 * resumes the context whose stack pointer is to. */
asm(".text\n"
    ".globl ss_emu_switch\n"
    ".type ss_emu_switch, @function\n"
    "ss_emu_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size ss_emu_switch, .-ss_emu_switch\n");
void *sched_sp;

void fiber_entry()
{
        (*current_body)();
        current->done = true;
        ss_emu_switch(&current->sp, sched_sp);
        die("a finished thread was resumed");
}

void fiber_init(Fiber *f, char *stack)
{
        /* As if ss_emu_switch had saved it just before calling fiber_entry:
         * six registers, then the return address, aligned as after a call. */
        void **top = reinterpret_cast<void **>(stack + FIBER_STACK);
        top -= 2;
        top[0] = reinterpret_cast<void *>(&fiber_entry);
        top[1] = nullptr;
        top -= 6;
        for (int i = 0; i < 6; i++)
                top[i] = nullptr;
        f->sp = top;
}

void fiber_resume(Fiber *f)
{
        ss_emu_switch(&sched_sp, f->sp);
}

void fiber_yield()
{
        ss_emu_switch(&current->sp, sched_sp);
}
#else
ucontext_t sched_ctx;

void fiber_entry()
{
        (*current_body)();
        current->done = true;
        swapcontext(&current->ctx, &sched_ctx);
        die("a finished thread was resumed");
}

void fiber_init(Fiber *f, char *stack)
{
        getcontext(&f->ctx);
        f->ctx.uc_stack.ss_sp = stack;
        f->ctx.uc_stack.ss_size = FIBER_STACK;
        f->ctx.uc_link = nullptr;
        makecontext(&f->ctx, fiber_entry, 0);
}

void fiber_resume(Fiber *f)
{
        swapcontext(&sched_ctx, &f->ctx);
}

void fiber_yield()
{
        swapcontext(&current->ctx, &sched_ctx);
}
#endif

void run_block(const std::function<void()> &body, dim3 block, size_t smem)
{
        State &S = st();
        const unsigned n = block.x * block.y * block.z;
        if (stacks_count < n) {
                if (stacks)
                        munmap(stacks, stacks_count * FIBER_STACK);
                stacks = static_cast<char *>(mmap(nullptr, n * FIBER_STACK, PROT_READ | PROT_WRITE,
                                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
                if (stacks == MAP_FAILED)
                        die("no memory for %u thread stacks", n);
                stacks_count = n;
        }
        std::vector<Fiber> f(n);
        std::vector<unsigned char> shared(smem + 16, 0xCD);
        unsigned char *base = shared.data();
        current_smem = base + ((16 - reinterpret_cast<uintptr_t>(base) % 16) % 16);
        current_body = &body;
        for (unsigned t = 0; t < n; t++) {
                f[t].idx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
                f[t].done = f[t].at_barrier = false;
                fiber_init(&f[t], stacks + (size_t)t * FIBER_STACK);
        }
        std::vector<unsigned> order(n);
        for (unsigned pass = 0;; pass++) {
                for (unsigned t = 0; t < n; t++)
                        order[t] = t;
                if (pass % 3 == 1)
                        std::reverse(order.begin(), order.end());
                else if (pass % 3 == 2)
                        std::shuffle(order.begin(), order.end(), S.rng);
                for (unsigned t : order) {
                        if (f[t].done)
                                continue;
                        f[t].at_barrier = false;
                        current = &f[t];
                        ss_emu_thread_idx = f[t].idx;
                        fiber_resume(&f[t]);
                }
                unsigned done = 0, waiting = 0;
                for (unsigned t = 0; t < n; t++) {
                        done += f[t].done;
                        waiting += f[t].at_barrier;
                }
                if (done == n)
                        break;
                if (done)
                        die("__syncthreads reached by %u of %u threads (%u finished)", waiting, n,
                            done);
        }
        current = nullptr;
}

} /* namespace */

void ss_emu_syncthreads()
{
        if (!current)
                die("__syncthreads outside a kernel");
        current->at_barrier = true;
        fiber_yield();
}

unsigned char *ss_emu_smem()
{
        return current_smem;
}

void ss_emu_misaligned(const void *p, unsigned bytes)
{
        die("a %u-byte vector access at %p is misaligned (block %u, thread %u)", bytes, p,
            ss_emu_block_idx.x, ss_emu_thread_idx.x);
}

void ss_emu_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t s, const void *fn,
                   std::function<void()> body)
{
        State &S = st();
        jitter();
        const unsigned threads = block.x * block.y * block.z;
        if (S.fail_launch && --S.fail_launch == 0) {
                fail(cudaErrorLaunchFailure);
                return;
        }
        if (threads == 0 || threads > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
            grid.y > 65535 || grid.z > 65535) {
                fail(cudaErrorInvalidConfiguration);
                return;
        }
        auto it = S.smem_attr.find(fn);
        const size_t allowed = it == S.smem_attr.end() ? 48 * 1024 : (size_t)it->second;
        if (smem > allowed) {
                fail(cudaErrorInvalidValue);
                return;
        }
        S.stats.launches++;
        Op op;
        op.run = [grid, block, smem, body]() {
                State &S2 = st();
                std::vector<unsigned> blocks(grid.x * grid.y * grid.z);
                for (unsigned b = 0; b < blocks.size(); b++)
                        blocks[b] = b;
                std::shuffle(blocks.begin(), blocks.end(), S2.rng);
                ss_emu_block_dim = {block.x, block.y, block.z};
                ss_emu_grid_dim = {grid.x, grid.y, grid.z};
                for (unsigned b : blocks) {
                        ss_emu_block_idx = {b % grid.x, (b / grid.x) % grid.y,
                                            b / (grid.x * grid.y)};
                        run_block(body, block, smem);
                        S2.stats.blocks++;
                }
        };
        enqueue(s, std::move(op));
}

/* ---- the runtime API ------------------------------------------------------ */

extern "C" {

void ss_emu_reset(uint64_t seed, uint64_t mem_bytes)
{
        State &S = st();
        drain_all();
        if (!S.allocs.empty())
                die("reset with %zu allocations alive", S.allocs.size());
        S.rng.seed(seed);
        S.mem_total = mem_bytes ? mem_bytes : 1ull << 30;
        S.mem_used = S.mem_max = 0;
        S.last = cudaSuccess;
        S.fail_malloc = S.fail_launch = 0;
        S.stats = {};
}

void ss_emu_fail_malloc(unsigned nth)
{
        st().fail_malloc = nth;
}

void ss_emu_fail_launch(unsigned nth)
{
        st().fail_launch = nth;
}

void ss_emu_no_device(int on)
{
        st().no_device = on != 0;
}

void ss_emu_stats(struct ss_emu_stats *out)
{
        *out = st().stats;
        out->max_mem = st().mem_max;
        out->live_allocs = st().allocs.size();
}

int ss__cuda_fail(struct ss_err *err, const char *call, cudaError_t e, const char *file, int line)
{
        const char *f = strrchr(file, '/');
        return ss_err_set(err, SS_EGPU, "%s failed: %s (%s) at %s:%d", call, cudaGetErrorString(e),
                          cudaGetErrorName(e), f ? f + 1 : file, line);
}

const char *cudaGetErrorString(cudaError_t e)
{
        switch (e) {
        case cudaSuccess:
                return "no error";
        case cudaErrorMemoryAllocation:
                return "out of memory";
        case cudaErrorInvalidValue:
                return "invalid argument";
        case cudaErrorInvalidConfiguration:
                return "invalid configuration argument";
        case cudaErrorLaunchFailure:
                return "unspecified launch failure";
        case cudaErrorNoDevice:
                return "no CUDA-capable device is detected";
        case cudaErrorInvalidDevice:
                return "invalid device ordinal";
        default:
                return "emulated error";
        }
}

const char *cudaGetErrorName(cudaError_t e)
{
        switch (e) {
        case cudaSuccess:
                return "cudaSuccess";
        case cudaErrorMemoryAllocation:
                return "cudaErrorMemoryAllocation";
        case cudaErrorInvalidValue:
                return "cudaErrorInvalidValue";
        case cudaErrorInvalidConfiguration:
                return "cudaErrorInvalidConfiguration";
        case cudaErrorLaunchFailure:
                return "cudaErrorLaunchFailure";
        case cudaErrorNoDevice:
                return "cudaErrorNoDevice";
        default:
                return "cudaErrorUnknown";
        }
}

cudaError_t cudaGetLastError(void)
{
        const cudaError_t e = st().last;
        st().last = cudaSuccess;
        return e;
}

cudaError_t cudaPeekAtLastError(void)
{
        return st().last;
}

cudaError_t cudaGetDeviceCount(int *count)
{
        if (st().no_device) {
                *count = 0;
                return fail(cudaErrorNoDevice);
        }
        *count = 1;
        return cudaSuccess;
}

cudaError_t cudaSetDevice(int d)
{
        return d == 0 && !st().no_device ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
        if (d != 0)
                return fail(cudaErrorInvalidDevice);
        memset(p, 0, sizeof(*p));
        snprintf(p->name, sizeof(p->name), "emulated device");
        p->major = 9;
        p->minor = 0;
        p->multiProcessorCount = 4;
        p->totalGlobalMem = st().mem_total;
        p->sharedMemPerBlockOptin = 232448;
        return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
        *free_b = st().mem_total - st().mem_used;
        *total = st().mem_total;
        return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *fn, enum cudaFuncAttribute attr, int value)
{
        if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
                if (value < 0 || value > 232448)
                        return fail(cudaErrorInvalidValue);
                st().smem_attr[fn] = value;
        }
        return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t size)
{
        State &S = st();
        jitter();
        *p = nullptr;
        if (S.fail_malloc && --S.fail_malloc == 0)
                return fail(cudaErrorMemoryAllocation);
        /* The device's allocation granularity, so that sizes near the
         * budget are charged as on the device. */
        const size_t charged = (size + (2u << 20) - 1) / (2u << 20) * (2u << 20);
        if (size == 0 || S.mem_used + charged > S.mem_total)
                return fail(cudaErrorMemoryAllocation);
        void *m = aligned_alloc(256, (size + 255) / 256 * 256);
        if (!m)
                return fail(cudaErrorMemoryAllocation);
        memset(m, 0xA5, size); /* garbage, as fresh device memory */
        S.allocs[reinterpret_cast<uintptr_t>(m)] = size;
        S.mem_used += charged;
        S.mem_max = std::max(S.mem_max, S.mem_used);
        *p = m;
        return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
        State &S = st();
        if (!p)
                return cudaSuccess;
        drain_all(); /* cudaFree waits for the device */
        auto it = S.allocs.find(reinterpret_cast<uintptr_t>(p));
        if (it == S.allocs.end())
                die("cudaFree of %p, which cudaMalloc did not return", p);
        S.mem_used -= (it->second + (2u << 20) - 1) / (2u << 20) * (2u << 20);
        S.allocs.erase(it);
        free(p);
        return cudaSuccess;
}

cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags)
{
        (void)flags;
        if (!p || !size || in_registered(p, 1))
                return fail(cudaErrorInvalidValue);
        st().host[reinterpret_cast<uintptr_t>(p)] = size;
        return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
        drain_all();
        return st().host.erase(reinterpret_cast<uintptr_t>(p)) ? cudaSuccess
                                                               : fail(cudaErrorInvalidValue);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
        (void)flags;
        Stream *x = new Stream;
        st().streams.push_back(x);
        *s = reinterpret_cast<cudaStream_t>(x);
        return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
        State &S = st();
        Stream *x = stream_of(s);
        drain_until([x] { return x->q.empty(); });
        S.streams.erase(std::remove(S.streams.begin(), S.streams.end(), x), S.streams.end());
        delete x;
        return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
        if (!s) {
                drain_all();
                return cudaSuccess;
        }
        Stream *x = stream_of(s);
        drain_until([x] { return x->q.empty(); });
        return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
        drain_all();
        return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
        *e = reinterpret_cast<cudaEvent_t>(new Event);
        return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
        (void)flags;
        return cudaEventCreate(e);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
        Event *x = reinterpret_cast<Event *>(e);
        /* A destroyed event may still be waited on by queued work on the
         * device; here it must not be freed before that work ran. */
        drain_all();
        delete x;
        return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
        jitter();
        Event *x = reinterpret_cast<Event *>(e);
        const uint64_t gen = ++x->recorded;
        Op op;
        op.run = [x, gen]() {
                x->done = gen;
                x->when = st().clock;
        };
        enqueue(s, std::move(op));
        return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
        (void)flags;
        jitter();
        Event *x = reinterpret_cast<Event *>(e);
        Op op;
        op.wait = x->recorded ? x : nullptr;
        op.gen = x->recorded;
        op.run = [] {};
        enqueue(s, std::move(op));
        return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
        Event *x = reinterpret_cast<Event *>(e);
        drain_until([x] { return x->done >= x->recorded; });
        return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
        Event *x = reinterpret_cast<Event *>(a), *y = reinterpret_cast<Event *>(b);
        if (!x->done || !y->done)
                return fail(cudaErrorInvalidValue);
        *ms = (float)((double)(y->when - x->when) * 1e-3);
        return cudaSuccess;
}

static bool is_device_dst(enum cudaMemcpyKind k)
{
        return k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
}

static bool is_device_src(enum cudaMemcpyKind k)
{
        return k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t s)
{
        State &S = st();
        jitter();
        if (width > dpitch || width > spitch || kind == cudaMemcpyDefault ||
            kind == cudaMemcpyHostToHost)
                return fail(cudaErrorInvalidValue);
        if (height && width) {
                check_side(dst, dpitch * (height - 1) + width, is_device_dst(kind), "copy target");
                check_side(src, spitch * (height - 1) + width, is_device_src(kind), "copy source");
        }
        S.stats.copies++;
        if (kind == cudaMemcpyHostToDevice)
                S.stats.bytes_h2d += width * height;
        if (kind == cudaMemcpyDeviceToHost)
                S.stats.bytes_d2h += width * height;
        Op op;
        op.run = [=]() {
                for (size_t r = 0; r < height; r++)
                        memmove(static_cast<char *>(dst) + r * dpitch,
                                static_cast<const char *>(src) + r * spitch, width);
        };
        enqueue(s, std::move(op));
        return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t s)
{
        return cudaMemcpy2DAsync(dst, count, src, count, count, 1, kind, s);
}

} /* extern "C" */
