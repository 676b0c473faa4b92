#include "core/mem.h"

#include <stdlib.h>
#include <sys/mman.h>

void *ss_alloc_huge(size_t bytes)
{
        const size_t huge = (size_t)2 << 20;
        if (bytes < 2 * huge)
                return malloc(bytes ? bytes : 1);
        void *p = NULL;
        const size_t len = (bytes + huge - 1) / huge * huge;
        if (posix_memalign(&p, huge, len) != 0)
                return NULL;
#ifdef MADV_HUGEPAGE
        madvise(p, len, MADV_HUGEPAGE); /* advice: ignored where not supported */
#endif
        return p;
}
