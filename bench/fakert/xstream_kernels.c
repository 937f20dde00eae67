/* xstream_kernels.c: bench/xstream_probe.cu's kernels for the fake driver (what
** the host sees of them; xs_spin_set sets its flag at once). */
#include "fakecuda.h"

FAKECUDA_KERNEL(xs_add, sizeof(int *), sizeof(int)) { *FAKECUDA_ARG(int *, 0) += FAKECUDA_ARG(int, 1); }

FAKECUDA_KERNEL(xs_spin_set, sizeof(int *), sizeof(long long)) { *FAKECUDA_ARG(volatile int *, 0) = 1; }

FAKECUDA_KERNEL(xs_read, sizeof(int *), sizeof(int *))
{
    *FAKECUDA_ARG(int *, 1) = *FAKECUDA_ARG(volatile int *, 0);
}
