/* SPDX-License-Identifier: MIT
 * nbsim — what `nbsim bench` says about the machine and where its results go: the device header,
 * meta.txt, the instruction-issue ceiling, the output folder and the plots. */
#ifndef APP_BENCH_REPORT_H
#define APP_BENCH_REPORT_H

#include <stdio.h>

#include "bench_map_kernels.h"
#include "bench_options.h"

/* Instructions per interaction for the ceilings and FLOP figures: a non-touching pair costs
 * ~10 FP32 instructions (bench/README.md, "Ceilings"); an ATM triple what the triplet kernel
 * issues per triple, counted in its SASS (bench/README.md). */
#define APP_BENCH_PAIR_INSTR 10.0
#define APP_BENCH_TRIPLE_INSTR SIM_TRIPLET_KERNEL_INSTR

/* FP32 instructions the GPU can issue per second: SMs x FP32 lanes x peak clock (0 = unknown). */
double app_bench_issue_rate(const sim_device_info *dev);

/* Lines naming the GPU, SMs, clocks, memory, driver and runtime; also the ceilings. */
void app_bench_print_device(FILE *f, const sim_device_info *dev);

/* meta.txt in dir: the device lines, the command line, the method. Written via a temporary. */
sim_status app_bench_write_meta(const char *dir, const sim_device_info *dev,
                                const app_bench_options *o, int argc, char **argv, sim_error *err);

/* Runs bench/plot.py on dir with the first python3 that has matplotlib; otherwise prints how to
 * make the plots. Never fails the benchmark. */
void app_bench_plot(const char *dir);

#endif /* APP_BENCH_REPORT_H */
