/* The emulator's fibers (see cuda_emu.h). */
#include "cuda_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <vector>

dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {
const size_t STACK = 128 * 1024;
struct fiber {
    ucontext_t ctx;
    dim3 tid;
    bool done;
};
ucontext_t sched;
std::vector<fiber> fibers;
std::vector<char> stacks;
fiber *cur;
const std::function<void()> *body;
float slots[1024];
double slots64[1024];
bool in_fiber; // a fiber of emu_run_block is running
struct region {
    void *p;
    size_t n;
};
std::vector<region> shared_regions;

void trampoline() {
    (*body)();
    cur->done = true; // uc_link returns to the scheduler
}

int linear_id() { return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)); }
} // namespace

void emu_run_block(const std::function<void()> &fn) {
    int n = (int)(blockDim.x * blockDim.y * blockDim.z);
    if (n > 1024) {
        fprintf(stderr, "cuda_emu: %d threads in a block\n", n);
        abort();
    }
    fibers.resize((size_t)n);
    stacks.resize((size_t)n * STACK);
    body = &fn;
    for (int t = 0; t < n; t++) {
        fiber &f = fibers[(size_t)t];
        f.tid = dim3((unsigned)t % blockDim.x, (unsigned)t / blockDim.x % blockDim.y,
                     (unsigned)t / (blockDim.x * blockDim.y));
        f.done = false;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = &stacks[(size_t)t * STACK];
        f.ctx.uc_stack.ss_size = STACK;
        f.ctx.uc_link = &sched;
        makecontext(&f.ctx, trampoline, 0);
    }
    for (int live = n; live > 0;) { // one round: every live thread runs to its next barrier
        live = 0;
        for (int t = 0; t < n; t++) {
            fiber &f = fibers[(size_t)t];
            if (f.done) continue;
            cur = &f;
            threadIdx = f.tid;
            in_fiber = true;
            swapcontext(&sched, &f.ctx);
            in_fiber = false;
            live += !f.done;
        }
    }
}

void emu_shared(void *p, size_t bytes) {
    for (const region &r : shared_regions)
        if (r.p == p) return;
    shared_regions.push_back({p, bytes});
    memset(p, 0xff, bytes); // first use: nothing written yet
}

void emu_shared_poison() {
    for (const region &r : shared_regions) memset(r.p, 0xff, r.n);
}

void __syncthreads() {
    if (!in_fiber) {
        fprintf(stderr, "cuda_emu: __syncthreads outside a fiber: the kernel was launched as "
                        "barrier-free (tests/cuda_emu/cu2cpp.py missed a barrier)\n");
        abort();
    }
    fiber *me = cur;
    swapcontext(&me->ctx, &sched);
    threadIdx = me->tid;
}

float __shfl_xor_sync(unsigned, float v, int lane_mask) {
    int t = linear_id();
    slots[t] = v;
    __syncthreads(); // every lane has written
    float r = slots[(t & ~31) | ((t & 31) ^ lane_mask)];
    __syncthreads(); // every lane has read before any writes again
    return r;
}
double __shfl_xor_sync(unsigned, double v, int lane_mask) {
    int t = linear_id();
    slots64[t] = v;
    __syncthreads();
    double r = slots64[(t & ~31) | ((t & 31) ^ lane_mask)];
    __syncthreads();
    return r;
}
