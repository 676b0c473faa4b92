/* Large arrays that are filled right after they are made. */
#ifndef SS_CORE_MEM_H
#define SS_CORE_MEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* malloc() for an array that will be written whole at once: from 4 MiB on,
 * 2 MiB-aligned and advised onto transparent huge pages where the kernel
 * gives them on request. Faulting a fresh array in 4 KiB pages costs 2.5 to
 * 3.5 times copying into it (a graph's new weights, a CCH metric). Freed
 * with free(); NULL when out of memory. */
void *ss_alloc_huge(size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
