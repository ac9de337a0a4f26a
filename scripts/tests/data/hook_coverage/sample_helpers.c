// SPDX-License-Identifier: GPL-2.0
/* Helpers of sample_kunit.c, in a file of their own (never built) */
#include "mm_hooks.h"
#include "sample.h"

bool sample_hold(struct kunit *test)
{
	if (!mm_hook(test, RCU_FREE_HOLD, "the hold"))
		return false;
	return true;
}

/* A static function of the name of one in sample_kunit.c: another one */
static void both(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 3, 3);			/* hook */
}

void sample_helper(struct kunit *test)
{
	if (sample_hold(test))
		both(test);
}
