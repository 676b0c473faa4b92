/* The GPU Floyd-Warshall's kernels and launchers, compiled for the CPU
 * stand-in (emu.h): the very source the device runs. */
#include "cuda_emu.h"

#include "kernels/fw.cu"
