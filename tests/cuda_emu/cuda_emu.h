/* The CPU emulator of CUDA kernels (see README.md beside this): the built-in variables, the
 * qualifiers, __syncthreads and warp shuffles, and emu_launch, which cu2cpp.py puts where a
 * kernel launch was. Blocks run one after another; a kernel without barriers runs its threads one
 * after another too, one with barriers or shuffles runs them as fibers (ucontext) that all meet
 * at each barrier, which is what __syncthreads promises (shuffles also barrier the whole block,
 * a stronger ordering than a warp's, which is fine for code that is correct on a GPU).
 * __syncthreads outside a fiber (a kernel cu2cpp.py judged barrier-free) aborts: the threads
 * would not meet. Shared memory is a static array per declaration, poisoned before each block. */
#ifndef SEER_CUDA_EMU_H
#define SEER_CUDA_EMU_H

#include <math.h>

#include <functional>

#include "cuda_runtime.h"

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __restrict__

extern dim3 threadIdx, blockIdx, blockDim, gridDim;

void emu_run_block(const std::function<void()> &body);
/* A __shared__ array (cu2cpp.py puts the call after its declaration): registered once, filled
 * with NaN bytes before every block. */
void emu_shared(void *p, size_t bytes);
void emu_shared_poison();
void __syncthreads();
float __shfl_xor_sync(unsigned mask, float v, int lane_mask);
double __shfl_xor_sync(unsigned mask, double v, int lane_mask);

template <class F> void emu_launch(dim3 grid, dim3 block, int sync, F f) {
    gridDim = grid, blockDim = block;
    std::function<void()> body(f);
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = dim3(bx, by, bz);
                emu_shared_poison(); // shared memory does not outlive its block
                if (sync) {
                    emu_run_block(body);
                    continue;
                }
                for (unsigned tz = 0; tz < block.z; tz++)
                    for (unsigned ty = 0; ty < block.y; ty++)
                        for (unsigned tx = 0; tx < block.x; tx++) {
                            threadIdx = dim3(tx, ty, tz);
                            f();
                        }
            }
}

#endif
