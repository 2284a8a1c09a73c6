/* SPDX-License-Identifier: MIT
 * nbsim — a short step launched as one CUDA graph (the stepper's step_begin / step_end).
 *
 * Why. A listed step is ~8 kernels and ~5 events, many of them a few microseconds long.
 * Launched one by one, each costs the host a few microseconds to enqueue; captured and
 * launched as one graph, 40 % less host time, and the GPU starts each kernel sooner
 * (bench/launch_overhead.cu). Measured, and on nbsim's own steps (bench/results/nvidia-h100/
 * step_graphs.md holds both): 5.5 % off the lattice's step at 16,384 bodies, 2.6 % at 65,536,
 * 1 to 2 % at 262,144 and 1M, friction too. An event itself costs the GPU a few microseconds:
 * that file says what marking only the ends would save (not done: the phases' times would go).
 *
 * How. step_begin starts a capture of the main stream (thread-local mode: anything that is not
 * stream work, such as an allocation, fails the step instead of slipping through) and the
 * phases enqueue exactly as they would, their marks as external event nodes (so the stepper
 * times the phases as before); step_end ends the capture and launches the graph through an
 * executable graph kept per shape (node count), updated in place with the new step's parameters
 * (cudaGraphExecUpdate: pointers that swapped, the step's index, the events), and instantiated
 * again only when its topology changed. A step that failed is dropped: its graph is destroyed
 * unlaunched, so none of its work reaches the device (the run stops with the step's error).
 *
 * Which steps. One rank (several synchronise through NCCL or the host between phases), culled
 * (the brute-force study mode stays as it is: its sweeps are long, and sliced), no ATM (its
 * sweeps are long), and tuning.stream_launches 0. Friction's springs are allocated at the
 * frame's start (cuda_step.cu), so no step allocates. */
#include <string.h>

#include "cuda/cuda_backend_impl.h"

namespace {

/* The executable graph for a step of `nodes` nodes: a kept one of that count that takes the new
 * graph's parameters (cudaGraphExecUpdate fails where the topology differs: two shapes may have as
 * many nodes), else the least recently used slot, instantiated anew. */
sim_status exec_for(sim_cuda_graphs *g, cudaGraph_t graph, cudaGraphExec_t *out, sim_error *err) {
    size_t nodes = 0;
    SIM_CUDA_TRY(cudaGraphGetNodes(graph, nullptr, &nodes));
    ++g->clock;
    int oldest = 0;
    for (int k = 0; k < SIM_CUDA_GRAPH_SHAPES; ++k) {
        if (g->exec[k] != nullptr && g->nodes[k] == nodes) {
            cudaGraphExecUpdateResultInfo info;
            if (cudaGraphExecUpdate(g->exec[k], graph, &info) == cudaSuccess) {
                g->used[k] = g->clock;
                *out = g->exec[k];
                return SIM_OK;
            }
            (void)cudaGetLastError(); /* another topology with as many nodes: the next, or new */
        }
        if (g->exec[k] == nullptr || (g->exec[oldest] != nullptr && g->used[k] < g->used[oldest])) {
            oldest = k;
        }
    }
    if (g->exec[oldest] != nullptr) {
        (void)cudaGraphExecDestroy(g->exec[oldest]);
        g->exec[oldest] = nullptr;
    }
    SIM_CUDA_TRY(cudaGraphInstantiate(&g->exec[oldest], graph, 0));
    g->nodes[oldest] = nodes;
    g->used[oldest] = g->clock;
    *out = g->exec[oldest];
    return SIM_OK;
}

} // namespace

sim_status sim_cuda_step_begin(sim_backend *base, const sim_step_shape *f, int *unit,
                               sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    *unit = 0;
    if (base->tuning.stream_launches || base->rank.world > 1 || !f->culled || f->triplets) {
        return SIM_OK;
    }
    SIM_CUDA_TRY(cudaStreamBeginCapture(b->streams.main, cudaStreamCaptureModeThreadLocal));
    b->graphs.capturing = 1;
    *unit = 1;
    return SIM_OK;
}

sim_status sim_cuda_step_end(sim_backend *base, int keep, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaGraph_t graph = nullptr;
    b->graphs.capturing = 0;
    const cudaError_t ended = cudaStreamEndCapture(b->streams.main, &graph);
    if (!keep || ended != cudaSuccess) {
        if (graph != nullptr) {
            (void)cudaGraphDestroy(graph);
        }
        (void)cudaGetLastError();
        if (!keep) {
            return SIM_OK;
        }
        return sim_fail(err, SIM_CUDA, "capturing a step into a CUDA graph: %s",
                        cudaGetErrorString(ended));
    }
    cudaGraphExec_t exec = nullptr;
    sim_status st = exec_for(&b->graphs, graph, &exec, err);
    if (st == SIM_OK) {
        const cudaError_t e = cudaGraphLaunch(exec, b->streams.main);
        if (e != cudaSuccess) {
            st = sim_fail(err, SIM_CUDA, "launching a step's CUDA graph: %s",
                          cudaGetErrorString(e));
        }
    }
    (void)cudaGraphDestroy(graph); /* the executable graph holds what it needs */
    return st;
}

void sim_cuda_graphs_free(cuda_backend *b) {
    for (int k = 0; k < SIM_CUDA_GRAPH_SHAPES; ++k) {
        if (b->graphs.exec[k] != nullptr) {
            (void)cudaGraphExecDestroy(b->graphs.exec[k]);
        }
    }
    memset(&b->graphs, 0, sizeof b->graphs);
}
