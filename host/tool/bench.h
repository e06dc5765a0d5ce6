/* shapematch bench: the paper's Fig. 8 experiment and a scene's speed, passes and memory. */
#ifndef SM_TOOL_BENCH_H
#define SM_TOOL_BENCH_H

/// `shapematch bench ...` with argv[0] the benchmark's name; returns the exit status.
int sm_tool_bench(int argc, char **argv);

#endif
