/* C11 atomics in headers that C++ (the Boost reference) and CUDA C++ (the
 * kernels) also include. C++ has no <stdatomic.h> before C++23, but
 * std::atomic<T> of a lock-free integer has the same size and
 * representation as _Atomic T, so both languages can share the structs. */
#ifndef SS_ATOMIC_COMPAT_H
#define SS_ATOMIC_COMPAT_H

#ifdef __cplusplus
#include <atomic>
typedef std::atomic<unsigned> ss_atomic_uint;
typedef std::atomic<int> ss_atomic_int;
#define ss_atomic_load_relaxed(p) ((p)->load(std::memory_order_relaxed))
#else
#include <stdatomic.h>
typedef atomic_uint ss_atomic_uint;
typedef atomic_int ss_atomic_int;
#define ss_atomic_load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#endif

#endif
