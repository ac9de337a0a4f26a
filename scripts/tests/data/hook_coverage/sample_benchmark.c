// SPDX-License-Identifier: GPL-2.0
/* A benchmark: its sites are not counted, its calls are (never built) */
#include "sample.h"

static void sample_bench(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);
	sample_for_bench(test);
}

static struct kunit_case bench_cases[] = {
	KUNIT_CASE(sample_bench),
	{}
};
