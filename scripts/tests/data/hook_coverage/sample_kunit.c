// SPDX-License-Identifier: GPL-2.0
/*
 * A synthetic suite for scripts/tests/test_hook_coverage.py (never built):
 * every assertion site ends its line with a comment that says whether it
 * runs without the test hooks ("run") or not ("hook").  Neither this
 * KUNIT_EXPECT_EQ(test, 0, 1) nor the one in a string below is a site.
 */
#include "mm_hooks.h"
#include "sample.h"

struct layout {
	bool held;
};

/* Returns false without the hook, as rfk_hold() does */
static bool hold(struct kunit *test, const char *part)
{
	KUNIT_EXPECT_TRUE(test, 1);			/* run */
	if (!mm_hook(test, RCU_FREE_HOLD, part))
		return false;
	KUNIT_ASSERT_EQ(test, 0, 0);			/* hook */
	return true;
}

/* Skip the case without a hook: the caller's rest is hook-only */
static void require(struct kunit *test)
{
	MM_HOOK_REQUIRE(test, FILEMAP_READ_RCU_LOOKUP);
	KUNIT_EXPECT_TRUE(test, 1);			/* hook */
}

static bool checked(struct kunit *test)
{
	MM_HOOK_REQUIRE(test, FILEMAP_READ_RCU_CAN_COPY);
	return true;
}

/* Called only where a hook is: hook-only, and so is what only it calls */
static void only_under_hook_inner(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);			/* hook */
}

static void only_under_hook(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);			/* hook */
	only_under_hook_inner(test);
}

/* Called under a hook and outside one: runs */
static void both(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 2, 2);			/* run */
}

/* Every running call passes @counted a value that is false without a hook */
static void judge(struct kunit *test, int n, bool counted)
{
	KUNIT_EXPECT_GT(test, n, 0);			/* run */
	if (!counted)
		return;
	KUNIT_EXPECT_EQ(test, n, 1);			/* hook */
}

/* A running call passes @flag a plain value: runs */
static void judge_plain(struct kunit *test, bool flag)
{
	if (flag)
		KUNIT_EXPECT_TRUE(test, flag);		/* run */
}

static void setup(struct kunit *test, struct layout *l)
{
	l->held = hold(test, "the hold");
}

/* Not analysed: conservatively hook-only */
#define CHECK_ONE(test, x)	KUNIT_EXPECT_EQ(test, x, 1)	/* hook */

static void case_require(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, 1);			/* run */
	MM_HOOK_REQUIRE(test, RCU_FREE_DRAIN_HELPS);
	KUNIT_EXPECT_TRUE(test, 1);			/* hook */
#if MM_HOOK(RCU_FREE_DRAIN_HELPS)
	KUNIT_EXPECT_TRUE(test, 1);			/* hook */
#endif
}

static void case_parts(struct kunit *test)
{
	bool queue = mm_hook(test, RCU_FREE_HOLD, "the queue count");
	bool built = MM_HOOK(RCU_FREE_NR_EARLY);
	bool probed = mm_test_probe(test, "tp", NULL, NULL);
	bool traced;
	int held = 0;	/* not a hook here, whatever it is elsewhere */

	if (mm_hook(test, RCU_FREE_NR_EARLY, "the early count")) {
		KUNIT_EXPECT_EQ(test, 0, 0);		/* hook */
		KUNIT_EXPECT_EQ(test,			/* hook */
				1, 1);
	} else {
		KUNIT_EXPECT_EQ(test, 2, 2);		/* run */
	}
	if (MM_HOOK(RCU_FREE_HOLD))
		KUNIT_EXPECT_EQ(test, 3, 3);		/* hook */
	else if (held)
		KUNIT_EXPECT_EQ(test, 4, 4);		/* run */
	if (queue)
		KUNIT_EXPECT_EQ(test, 5, 5);		/* hook */
	if (queue && held > 1)
		KUNIT_EXPECT_EQ(test, 6, 6);		/* hook */
	if (queue || held)
		KUNIT_EXPECT_EQ(test, 7, 7);		/* run */
	if (!built)
		KUNIT_EXPECT_EQ(test, 8, 8);		/* run */
	else
		KUNIT_EXPECT_EQ(test, 9, 9);		/* hook */
	if (mm_hook_trace(test, probed, "tp", "the path"))
		KUNIT_EXPECT_EQ(test, 10, 10);		/* hook */
	if (probed)
		KUNIT_EXPECT_EQ(test, 11, 11);		/* hook */
	traced = mm_hook_trace(test, probed, "tp", "the path");
	while (traced)
		KUNIT_FAIL(test, "twelve");		/* hook */
	if (IS_ENABLED(CONFIG_MM_KUNIT_HOOK_RCU_FREE_HOLD))
		KUNIT_FAIL(test, "thirteen");		/* hook */
	if (IS_ENABLED(CONFIG_PAGE_RCU_FREE))
		KUNIT_FAIL(test, "fourteen");		/* run */
	if (mm_hook(test, RCU_FREE_HOLD, "x"))
		only_under_hook(test);
	if (queue)
		both(test);
	both(test);
	judge(test, 1, queue);
	judge_plain(test, true);
	kunit_info(test, "KUNIT_FAIL(test) in a string is no site");
#if IS_ENABLED(CONFIG_MM_KUNIT_HOOK_RCU_FREE_HOLD)
	KUNIT_EXPECT_EQ(test, 15, 15);			/* hook */
#else
	KUNIT_EXPECT_EQ(test, 16, 16);			/* run */
#endif
#if !MM_HOOK(RCU_FREE_HOLD)
	KUNIT_EXPECT_EQ(test, 17, 17);			/* run */
#else
	KUNIT_EXPECT_EQ(test, 18, 18);			/* hook */
#endif
#ifdef CONFIG_PAGE_RCU_FREE
	KUNIT_EXPECT_EQ(test, 19, 19);			/* run */
#endif
	if (!queue)
		return;
	KUNIT_EXPECT_EQ(test, 20, 20);			/* hook */
}

static void case_helpers(struct kunit *test)
{
	struct layout l = {};
	bool held;

	setup(test, &l);
	if (l.held)
		KUNIT_EXPECT_EQ(test, 1, 1);		/* hook */
	held = hold(test, "part");
	if (held) {
		KUNIT_EXPECT_EQ(test, 2, 2);		/* hook */
	}
	if (hold(test, "part"))
		KUNIT_EXPECT_EQ(test, 3, 3);		/* hook */
	if (sample_hold(test))
		KUNIT_EXPECT_EQ(test, 4, 4);		/* hook */
	hold(test, "part");
	sample_helper(test);
	KUNIT_EXPECT_EQ(test, 5, 5);			/* run */
	KUNIT_EXPECT_TRUE(test, checked(test));		/* hook */
	KUNIT_EXPECT_EQ(test, 6, 6);			/* hook */
}

static void case_skips(struct kunit *test)
{
	bool hold = mm_hook(test, RCU_FREE_HOLD, "the hold");

	KUNIT_EXPECT_EQ(test, 1, 1);			/* run */
	if (!hold && jiffies)
		kunit_skip(test, MM_HOOK_ABSENT "%s", "a grace period ended");
	KUNIT_EXPECT_EQ(test, 2, 2);			/* hook */
}

static void case_require_helper(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);			/* run */
	require(test);
	KUNIT_EXPECT_EQ(test, 2, 2);			/* hook */
}

static void case_loop(struct kunit *test)
{
	int i;

	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, i, i);		/* run */
		if (!mm_hook(test, RCU_FREE_HOLD, "the loop"))
			continue;
		KUNIT_EXPECT_EQ(test, i, i);		/* hook */
	}
	/* Conservative: the rest of the function after the continue */
	KUNIT_EXPECT_EQ(test, 2, 2);			/* hook */
}

/* An operand false without the hook does not make || false */
static void case_or(struct kunit *test, int n)
{
	bool queue = mm_hook(test, RCU_FREE_HOLD, "the queue");

	if (queue || n > 1)
		return;
	KUNIT_EXPECT_EQ(test, n, 1);			/* run */
	if (!queue || n > 1)
		return;
	KUNIT_EXPECT_EQ(test, n, 2);			/* hook */
}

static void case_do(struct kunit *test)
{
	do {
		if (mm_hook(test, RCU_FREE_HOLD, "the loop"))
			KUNIT_EXPECT_EQ(test, 1, 1);	/* hook */
		KUNIT_EXPECT_EQ(test, 2, 2);		/* run */
	} while (0);
}

static void case_common(struct kunit *test)
{
	sample_common(test);
}

static int hooked_init(struct kunit *test)
{
	MM_HOOK_REQUIRE(test, FILEMAP_GET_READ_BATCH);
	return 0;
}

/* Every case of hooked_suite is skipped by its .init without the hook */
static void case_hooked_suite(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1, 1);			/* hook */
	sample_common(test);
}

static struct kunit_case hooked_cases[] = {
	KUNIT_CASE(case_hooked_suite),
	{}
};

static struct kunit_suite hooked_suite = {
	.name = "hooked",
	.init = hooked_init,
	.test_cases = hooked_cases,
};

static struct kunit_case plain_cases[] = {
	KUNIT_CASE(case_require),
	KUNIT_CASE(case_parts),
	KUNIT_CASE(case_helpers),
	KUNIT_CASE(case_skips),
	KUNIT_CASE(case_require_helper),
	KUNIT_CASE(case_loop),
	KUNIT_CASE(case_or),
	KUNIT_CASE(case_do),
	KUNIT_CASE(case_common),
	{}
};

static struct kunit_suite plain_suite = {
	.name = "plain",
	.test_cases = plain_cases,
};

kunit_test_suites(&hooked_suite, &plain_suite);
