/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers of sample_kunit.c (never built) */
bool sample_hold(struct kunit *test);
void sample_helper(struct kunit *test);

static inline void sample_common(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);			/* run */
}

/* Called only from a benchmark, where no hook guards it: runs */
static inline void sample_for_bench(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);			/* run */
}
