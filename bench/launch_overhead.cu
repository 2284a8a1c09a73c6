// SPDX-License-Identifier: MIT
// nbsim — what launching a step's kernels one by one costs on this GPU and its host, against a
// CUDA graph (why sim/cuda/step_graph.cu launches short steps as graphs). A "step" is K = 10
// dependent kernels over n bodies (16 B read and written per body, a grid-stride loop) and 5
// events between them, as a listed step of nbsim is. Modes:
//   stream          the kernels and events enqueued on a stream as they come (nbsim before);
//   stream+PDL      every other kernel a programmatic dependent launch (as the lists' build);
//   capture+update  each step captured from the stream, the kept executable graph updated with
//                   it (cudaGraphExecUpdate) and launched: what step_graph.cu does; the events
//                   alternate between two sets from step to step (nbsim's marks change too);
//   graph           one graph instantiated once and relaunched (the floor: no capture).
// Frames of 10 steps end in a host sync, as nbsim's. Printed per step: the host's enqueueing
// time and the GPU's time from the first step's start to the last one's end (events).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/launch_overhead.cu -o launch_overhead && ./launch_overhead
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void work(const float4 *a, float4 *b, int n) {
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float4 v = a[i];
        v.x = v.x * 1.0001f + 0.5f;
        b[i] = v;
    }
}

static double now_us() {
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

enum { kKernels = 10, kEvents = 5, kSteps = 300, kFrame = 10 };
enum Mode { kStream, kStreamPdl, kCaptureUpdate, kGraph, kModes };
static const char *const kNames[kModes] = {"stream", "stream+PDL", "capture+update", "graph"};

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s: %d kernels and %d events per step, %d steps in frames of %d\n", prop.name,
                kKernels, kEvents, kSteps, kFrame);
    for (int n : {0, 65536, 262144, 1048576}) {
        float4 *a, *b;
        CK(cudaMalloc(&a, (size_t)(n > 0 ? n : 1) * 16));
        CK(cudaMalloc(&b, (size_t)(n > 0 ? n : 1) * 16));
        cudaStream_t s;
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        const int blocks = n > 0 ? (n + 255) / 256 : 1;
        cudaEvent_t ev[2][kEvents], first, last;
        for (auto &set : ev) {
            for (auto &e : set) {
                CK(cudaEventCreate(&e));
            }
        }
        CK(cudaEventCreate(&first));
        CK(cudaEventCreate(&last));
        auto enqueue = [&](int step, bool pdl, bool captured) -> int {
            for (int k = 0; k < kKernels; ++k) {
                const bool odd = ((step + k) & 1) != 0;
                cudaLaunchAttribute at[1];
                at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
                at[0].val.programmaticStreamSerializationAllowed = 1;
                cudaLaunchConfig_t c = {};
                c.gridDim = dim3(blocks);
                c.blockDim = dim3(256);
                c.stream = s;
                c.attrs = at;
                c.numAttrs = pdl && (k % 2) == 1 ? 1 : 0;
                CK(cudaLaunchKernelEx(&c, work, (const float4 *)(odd ? a : b), odd ? b : a, n));
                if (k % 2 == 1) {
                    cudaEvent_t e = ev[step & 1][k / 2];
                    CK(cudaEventRecordWithFlags(
                        e, s, captured ? cudaEventRecordExternal : cudaEventRecordDefault));
                }
            }
            return 0;
        };
        for (int mode = 0; mode < kModes; ++mode) {
            cudaGraphExec_t exec = nullptr;
            int instantiated = 0;
            double host = 0.0;
            for (int rep = 0; rep < 2; ++rep) { // the first: warm-up
                CK(cudaStreamSynchronize(s));
                host = 0.0;
                for (int st = 0; st < kSteps; ++st) {
                    if (st == 0) {
                        CK(cudaEventRecord(first, s));
                    }
                    const double t0 = now_us();
                    if (mode == kStream || mode == kStreamPdl) {
                        if (enqueue(st, mode == kStreamPdl, false) != 0) {
                            return 1;
                        }
                    } else if (mode == kGraph && exec != nullptr) {
                        CK(cudaGraphLaunch(exec, s));
                    } else {
                        cudaGraph_t g;
                        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
                        if (enqueue(st, true, true) != 0) {
                            return 1;
                        }
                        CK(cudaStreamEndCapture(s, &g));
                        cudaGraphExecUpdateResultInfo info;
                        if (exec == nullptr || cudaGraphExecUpdate(exec, g, &info) != cudaSuccess) {
                            (void)cudaGetLastError();
                            if (exec != nullptr) {
                                CK(cudaGraphExecDestroy(exec));
                            }
                            CK(cudaGraphInstantiate(&exec, g, 0));
                            ++instantiated;
                        }
                        CK(cudaGraphLaunch(exec, s));
                        CK(cudaGraphDestroy(g));
                    }
                    host += now_us() - t0;
                    if (st == kSteps - 1) {
                        CK(cudaEventRecord(last, s));
                    }
                    if (st % kFrame == kFrame - 1) {
                        CK(cudaStreamSynchronize(s));
                    }
                }
            }
            float ms = 0.0f;
            CK(cudaEventElapsedTime(&ms, first, last));
            std::printf("n %8d  %-15s host %6.2f us/step  GPU %6.2f us/step  (%d instantiations)\n",
                        n, kNames[mode], host / kSteps, 1000.0 * ms / kSteps, instantiated);
            if (exec != nullptr) {
                CK(cudaGraphExecDestroy(exec));
            }
        }
        CK(cudaFree(a));
        CK(cudaFree(b));
        CK(cudaStreamDestroy(s));
    }
    return 0;
}
