/* Tiny test macros in the manner of Box2D's test_macros.h: a failed check prints where and
 * why and counts, the test goes on, and the executable exits non-zero if anything failed. */
#ifndef SM_TEST_MACROS_H
#define SM_TEST_MACROS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

extern int sm_test_failures;

#define ENSURE(condition)                                                                        \
    do {                                                                                         \
        if (!(condition)) {                                                                      \
            fprintf(stderr, "%s:%d: ENSURE(%s) failed\n", __FILE__, __LINE__, #condition);       \
            sm_test_failures++;                                                                  \
        }                                                                                        \
    } while (0)

/// |value| <= tolerance (NaN fails).
#define ENSURE_SMALL(value, tolerance)                                                           \
    do {                                                                                         \
        double ensure_v_ = (value), ensure_t_ = (tolerance);                                     \
        if (!(fabs(ensure_v_) <= ensure_t_)) {                                                   \
            fprintf(stderr, "%s:%d: ENSURE_SMALL(%s, %s) failed: %.6g > %.6g\n", __FILE__,       \
                    __LINE__, #value, #tolerance, fabs(ensure_v_), ensure_t_);                   \
            sm_test_failures++;                                                                  \
        }                                                                                        \
    } while (0)

/// lo <= value <= hi (NaN fails).
#define ENSURE_RANGE(value, lo, hi)                                                              \
    do {                                                                                         \
        double ensure_v_ = (value), ensure_lo_ = (lo), ensure_hi_ = (hi);                        \
        if (!(ensure_v_ >= ensure_lo_ && ensure_v_ <= ensure_hi_)) {                             \
            fprintf(stderr, "%s:%d: ENSURE_RANGE(%s) failed: %.6g not in [%.6g, %.6g]\n",        \
                    __FILE__, __LINE__, #value, ensure_v_, ensure_lo_, ensure_hi_);              \
            sm_test_failures++;                                                                  \
        }                                                                                        \
    } while (0)

/// A library call returns SM_OK.
#define ENSURE_OK(call)                                                                          \
    do {                                                                                         \
        sm_result ensure_r_ = (call);                                                            \
        if (ensure_r_ != SM_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call,            \
                    sm_result_name(ensure_r_), sm_last_error());                                 \
            sm_test_failures++;                                                                  \
        }                                                                                        \
    } while (0)

/// Runs test functions named on the command line, or all of them; returns the exit status.
typedef struct sm_test_case {
    const char *name;
    void (*run)(void);
} sm_test_case;

#define TEST(fn) {#fn, fn}

int sm_test_main(int argc, char **argv, const sm_test_case *tests, int count);

#endif
