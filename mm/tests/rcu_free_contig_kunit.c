// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for alloc_contig_range() of the pages waiting for a grace
 * period (rcu-free series, patch 7): a range it needs free holds waiting
 * pages, or flagged folios it migrates (whose old copies then wait), and
 * it must free them instead of failing.  Memory offline, the other path
 * that needs a range free, is in rcu_free_offline_kunit.c.
 *
 * Each case frees flagged pages of its own, or flags tmpfs folios in the
 * range, and then drives alloc_contig_range().  Where the hook is there,
 * the case holds the lists while it frees (rcu_free_hold()): what it
 * frees then waits with no grace period, normal or expedited, started
 * for it, so only the path under test can free it, and the case also
 * checks that the path did (pgfree_rcu_drain).  Without the hook those
 * parts are skipped by name and the rest decides: the range is
 * allocated, the file reads back the same, and every page seen back had
 * a full grace period since its last put (rcu_free_helpers.h).
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mmzone.h>

#include "rcu_free_helpers.h"

/* How a case lays out the pageblock it hands to alloc_contig_range() */
struct contig_case {
	const char *name;
	/* The range starts one page in; the page below it is free */
	bool unaligned;
	/* The pages of the range wait for a grace period */
	bool waiting;
};

static const struct contig_case contig_cases[] = {
	{ "aligned, waiting", false, true },
	{ "unaligned, waiting", true, true },
	{ "unaligned, nothing waiting", true, false },
};

KUNIT_ARRAY_PARAM_DESC(contig, contig_cases, name);

/*
 * A whole free pageblock of @gfp's migratetype, split into order-0 pages
 * the case owns; skips when there is none.
 */
static struct page *alloc_split_pageblock(struct kunit *test, gfp_t gfp)
{
	struct page *block = alloc_pages(gfp | __GFP_NORETRY | __GFP_NOWARN,
					 pageblock_order);

	if (!block)
		kunit_skip(test, "machine: no free pageblock");
	split_page(block, pageblock_order);
	return block;
}

/*
 * alloc_contig_range() of a pageblock whose pages wait for a grace period
 * frees them (one drain, where they are held back) instead of failing.
 * With the range starting one page in, the freed pages merge with the free
 * page below it, and the range is found inside that buddy only if it is
 * looked up again after the drain.  With nothing waiting, no drain.
 */
static void rcu_free_contig_range(struct kunit *test)
{
	const struct contig_case *c = test->param_value;
	const unsigned long nr = pageblock_nr_pages;
	unsigned long pfn, start, i, ev0, drains;
	struct page *block;
	bool held = false;
	int ret;

	rfk_require_contig(test);
	block = alloc_split_pageblock(test, GFP_KERNEL);
	pfn = page_to_pfn(block);
	start = pfn + c->unaligned;

	ev0 = vm_event(test, "pgfree_rcu_drain");
	if (c->waiting)
		held = rfk_hold(test, "the drain that freed the range");
	for (i = 0; i < nr; i++) {
		if (c->waiting && pfn + i >= start)
			rfk_put_flagged(test, pfn_to_page(pfn + i));
		else
			__free_page(pfn_to_page(pfn + i));
	}
	ret = rfk_alloc_contig(start, pfn + nr);
	rfk_check_freed(test, "alloc_contig_range()");
	drains = vm_event(test, "pgfree_rcu_drain") - ev0;
	if (!ret)
		rfk_free_contig(start, pfn + nr - start);

	KUNIT_EXPECT_EQ(test, ret, 0);
	if (!c->waiting)
		KUNIT_EXPECT_EQ(test, drains, 0);
	else if (held)
		KUNIT_EXPECT_EQ(test, drains, 1);
}

/*
 * alloc_contig_range() of a pageblock holding flagged tmpfs folios in use:
 * it migrates them, and their old copies wait for a grace period, so the
 * range is free only once it has freed them (a drain, where they are held
 * back).  The file reads back the same afterwards.  The pageblock is a
 * movable one the case allocated: it frees the first pages of it just
 * before writing the file, so the file's folios come from this CPU's
 * lists, then the rest.
 */
static void rcu_free_contig_migrated(struct kunit *test)
{
	struct rfk_moved_file *mf;
	unsigned long start, i;
	struct page *block;
	int ret;

	rfk_require_contig(test);
	mf = rfk_moved_file_create(test, "contig");
	KUNIT_ASSERT_NOT_NULL(test, mf);
	block = alloc_split_pageblock(test, GFP_HIGHUSER_MOVABLE);
	start = page_to_pfn(block);
	KUNIT_ASSERT_EQ(test, rfk_moved_file_write(mf, block, RFK_MOVED_FOLIOS),
			0);
	for (i = RFK_MOVED_FOLIOS; i < pageblock_nr_pages; i++)
		__free_page(block + i);

	ret = rfk_moved_file_flag(test, mf, start, start + pageblock_nr_pages);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ret = rfk_alloc_contig(start, start + pageblock_nr_pages);
	rfk_check_freed(test, "alloc_contig_range()");
	if (!ret)
		rfk_free_contig(start, pageblock_nr_pages);
	rfk_moved_file_check(test, mf, ret);
}

static struct kunit_case rcu_free_contig_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_contig_range, contig_gen_params),
	KUNIT_CASE(rcu_free_contig_migrated),
	{}
};

static struct kunit_suite rcu_free_contig_suite = {
	.name = "rcu_free_contig",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_contig_cases,
};

kunit_test_suite(rcu_free_contig_suite);

MODULE_DESCRIPTION("KUnit tests for range allocation of the pages waiting for a grace period");
MODULE_LICENSE("GPL");
