// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the free of a flagged folio while a reader may hold it
 * (rcu-free series, patches 1-9 as the reads of patches 10-18 meet them,
 * and patch 18): a folio that reads flagged PG_rcu_free, of a file that is
 * truncated, or deleted and its inode evicted, must wait for a grace
 * period, since a read without a reference may still be copying from it
 * (the v1 ABA).  The other cases of reads without references are in
 * lockless_read_kunit.c; this suite shares its helpers (lockless_read.h).
 *
 * The case decides on what a user of the kernel sees: the page's state
 * (free buddy block, refcount, PG_rcu_free) and nr_free_rcu (looked up by
 * name).  rcu_free_hold() (a hook of ours, CONFIG_DEBUG_PAGE_RCU_FREE)
 * holds the grace period back, so that the case always decides; without
 * it the case decides when no grace period ended before it looked, and
 * else skips, naming the hook.  Flagged folios are made the way a
 * workload makes them: by reading them again and again.  On a kernel
 * without the series (no CONFIG_PAGE_RCU_FREE) every case skips, saying
 * so.
 */

#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/swap.h>

#include "../internal.h"
#include "../page_alloc.h"
#include "lockless_read.h"
#include "vmstat_by_name.h"

/* How the ABA case lets go of the file while a reader may hold its folio */
struct aba_case {
	const char *name;
	bool evict;	/* delete the file and evict its inode; else truncate */
	bool off;	/* lockless_page_cache_read turned off first (patch 18) */
};

static const struct aba_case aba_cases[] = {
	{ "truncated", false, false },
	{ "evicted", true, false },
	{ "truncated, switch off", false, true },
};

KUNIT_ARRAY_PARAM_DESC(aba, aba_cases, name);

static void hold_release(void *unused)
{
	rcu_free_release();
}

/*
 * The v1 ABA: a reader may hold a pointer to a flagged folio while its
 * file is truncated, or deleted and its inode evicted.  Its free must stay
 * deferred: the page is neither free nor in use again, still has
 * PG_rcu_free and is counted as waiting (nr_free_rcu rose by at least the
 * file's flagged pages) while no grace period has ended since.  Fails if
 * eviction or truncation clears PG_rcu_free before the free.  With
 * rcu_free_hold() (a hook of ours) the grace period is held back and the
 * case always decides; rcu_free_nr_queued() rose too, and once the hold
 * ends and a grace period has, the page is out of the lists: back in the
 * allocator (a free buddy block) or in use again.  Without the hold it
 * decides when no grace period ended between the last reference and the
 * look at the page (poll_state_synchronize_rcu_full()), and else skips;
 * the count then decides only when no page of an earlier case was still
 * waiting (those could leave the lists meanwhile).  "switch off": the
 * same once lockless_page_cache_read is 0 (patch 18), which must leave
 * the flag and the deferred free alone: a read that tested the switch
 * before may still be copying.
 */
static void lockless_read_aba_evicted_folio_free_deferred(struct kunit *test)
{
	const struct aba_case *c = test->param_value;
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	unsigned long queued0 = 0, queued_in = 0;
	long nr, waiting0, waiting_in;
	bool hold, buddy, flagged;
	struct rcu_gp_seq gp;
	struct folio *folio;
	struct mm_kunit_file *lf;
	struct page *page;
	int ref;

	if (c->off && !lr_switch_exists(test))
		kunit_skip(test,
			   "not applied: no lockless_page_cache_read switch (rcu-free patch 18)");
	lf = lr_hot_file(test, MM_KUNIT_TMPFS, 2 * PAGE_SIZE, 10);
	/* Every flagged page of the file waits once the file lets go */
	nr = lr_pages_flagged(lf, 2);
	if (c->off)
		lr_switch(test, false);
	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	page = &folio->page;
	folio_put(folio);

	lru_add_drain_all();
	hold = mm_hook(test, RCU_FREE_HOLD,
		       "the hold of the grace period, the queue count and the page's return after it");
	if (hold) {
		rcu_free_hold();
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
								hold_release,
								NULL), 0);
		/* Earlier cases' grace periods, started before the hold, end */
		rcu_free_wait_grace();
		queued0 = rcu_free_nr_queued();
	}
	waiting0 = zone_stat_sum(nr_free_rcu);
	get_state_synchronize_rcu_full(&gp);
	if (c->evict)
		mm_kunit_file_drop(test, lf);
	else
		KUNIT_ASSERT_EQ(test, vfs_truncate(&lf->file->f_path, 0), 0);
	/*
	 * A page freed at once would be on a per-CPU list: move it to buddy,
	 * where it may merge into a larger free block (not PageBuddy itself)
	 */
	drain_all_pages(NULL);
	buddy = is_free_buddy_page(page);
	ref = page_ref_count(page);
	flagged = lr_page_rcu_free(page);
	waiting_in = zone_stat_sum(nr_free_rcu);
	if (hold)
		queued_in = rcu_free_nr_queued();
	/* After the look: no grace period before it either */
	if (!hold && poll_state_synchronize_rcu_full(&gp))
		kunit_skip(test, MM_HOOK_ABSENT
			   "%s: a grace period ended before the page was looked at",
			   mm_hook_name_RCU_FREE_HOLD);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "%s: flagged folio freed at once",
			       c->name);
	KUNIT_EXPECT_EQ_MSG(test, ref, 0,
			    "%s: page in use again (or never freed)", c->name);
	KUNIT_EXPECT_TRUE_MSG(test, flagged,
			      "%s: PG_rcu_free gone while the page waits", c->name);
	if (hold || !waiting0)
		KUNIT_EXPECT_GE_MSG(test, waiting_in - waiting0, nr,
				    "%s: nr_free_rcu did not count the file's %ld flagged pages as waiting",
				    c->name, nr);
	else
		mm_hook(test, RCU_FREE_HOLD,
			"nr_free_rcu (pages of an earlier case were waiting too)");
	if (!hold)
		return;
	KUNIT_EXPECT_GE_MSG(test, queued_in - queued0, (unsigned long)nr,
			    "%s: rcu_free_nr_queued() did not count the file's %ld flagged pages",
			    c->name, nr);

	/* The hold ends: a grace period starts for what it kept */
	kunit_release_action(test, hold_release, NULL);
	lr_wait_deferred();
	drain_all_pages(NULL);
	buddy = is_free_buddy_page(page);
	ref = page_ref_count(page);
	flagged = lr_page_rcu_free(page);
	KUNIT_EXPECT_FALSE_MSG(test, flagged && !ref,
			       "%s: still waiting after its grace period", c->name);
	KUNIT_EXPECT_TRUE_MSG(test, buddy || ref,
			      "%s: after its grace period neither in a free buddy block nor in use",
			      c->name);
}

static int lockless_read_aba_test_init(struct kunit *test)
{
	lr_require_rcu_free(test);
	lr_wait_deferred();
	/*
	 * As in lockless_read: reads without references on for the case; the
	 * value found is written back when the case ends.
	 */
	if (lr_switch_exists(test))
		lr_switch(test, true);
	return 0;
}

static void lockless_read_aba_test_exit(struct kunit *test)
{
	/* A hold of the case ends before the wait for what it left */
	if (MM_HOOK(RCU_FREE_HOLD))
		kunit_release_action(test, hold_release, NULL);
	lr_wait_deferred();
}

static struct kunit_case lockless_read_aba_cases[] = {
	KUNIT_CASE_PARAM(lockless_read_aba_evicted_folio_free_deferred,
			 aba_gen_params),
	{}
};

static struct kunit_suite lockless_read_aba_suite = {
	.name = "lockless_read_aba",
	.init = lockless_read_aba_test_init,
	.exit = lockless_read_aba_test_exit,
	.test_cases = lockless_read_aba_cases,
};

kunit_test_suite(lockless_read_aba_suite);

MODULE_DESCRIPTION("KUnit tests for the deferred free of folios read without references");
MODULE_LICENSE("GPL");
