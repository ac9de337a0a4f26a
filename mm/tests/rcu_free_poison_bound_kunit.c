// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for when memory_failure() frees the pages waiting for a
 * grace period (rcu-free series, patch 9): it drains every CPU's lists
 * and waits for an expedited grace period, so it must do it only where
 * that can help, for a page of a zone where pages wait.  The other cases
 * of memory_failure() are in rcu_free_poison_kunit.c.
 *
 * The pages that must not be freed wait held: by the hold
 * (rcu_free_hold()) where the hook is there, else by a gate aimed at the
 * case (rcu_free_gate.h), which lets their grace period end only while
 * the case's task waits for one; with neither the case skips, naming the
 * hook.
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mmzone.h>

#include "rcu_free_gate.h"
#include "rcu_free_helpers.h"

/* Flagged pages of another zone that wait during the call */
#define NR_OTHER_WAITING	8

/* Gives the case's poisoned page back, as an unpoison would, flag kept */
static void poisoned_release(void *data)
{
	struct page *page = data;

	ClearPageHWPoison(page);
	set_page_count(page, 1);
	put_page(page);
}

/*
 * memory_failure() of a ZONE_DMA page it finds poisoned, with PG_rcu_free,
 * no reference and not free (an order-0 poisoned page dropped at its
 * free: it looks like a waiting page), while nothing of ZONE_DMA waits
 * and NR_OTHER_WAITING flagged pages of another zone do: a drain could
 * not free the page, so the call must not drain.  It returns -EHWPOISON,
 * and the other zone's pages still wait after it, not let out by the
 * gate for a grace-period wait of the call.
 */
static void rcu_free_poison_bound_other_zone(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	struct page *page, *pages[NR_OTHER_WAITING];
	unsigned int gate_waits = 0;
	struct rfg_gate *gate;
	int i, ret, waiting;
	bool hung = false;
	unsigned long pfn;
	struct zone *dma;

	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "config: CONFIG_MEMORY_FAILURE is off");
	if (!IS_ENABLED(CONFIG_ZONE_DMA))
		kunit_skip(test, "config: CONFIG_ZONE_DMA is off");
	page = alloc_page(GFP_KERNEL | GFP_DMA | __GFP_NOWARN);
	if (!page)
		kunit_skip(test, "machine: no free page in ZONE_DMA");
	dma = page_zone(page);
	pfn = page_to_pfn(page);
	rfk_alloc_all(test, pages, NR_OTHER_WAITING, GFP_KERNEL, GFP_KERNEL);
	for (i = 0; i < NR_OTHER_WAITING; i++) {
		if (page_zone(pages[i]) != dma)
			continue;
		while (i < NR_OTHER_WAITING)
			__free_page(pages[i++]);
		__free_page(page);
		kunit_skip(test, "machine: GFP_KERNEL gave a page of ZONE_DMA");
	}
	/* Before the frees: it may end the case */
	gate = rfg_hold(test, "that the other zone's pages wait during the call");
	rfg_inside(gate);
	for (i = 0; i < NR_OTHER_WAITING; i++)
		rfk_put_flagged(test, pages[i]);

	/* Dropped at its free, as a poisoned order-0 page is */
	folio_set_rcu_free(page_folio(page));
	SetPageHWPoison(page);
	put_page(page);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, poisoned_release,
							page), 0);
	KUNIT_ASSERT_EQ(test, page_count(page), 0);
	KUNIT_ASSERT_FALSE(test, is_free_buddy_page(page));
	if (zone_page_state_snapshot(dma, nr_free_rcu)) {
		rfg_stop(gate, &gate_waits, &hung);
		kunit_skip(test, "machine: pages of ZONE_DMA wait for a grace period");
	}

	ret = memory_failure(pfn, MF_SW_SIMULATED);
	for (i = 0, waiting = 0; i < NR_OTHER_WAITING; i++)
		waiting += folio_test_rcu_free(page_folio(pages[i]));
	rfg_stop(gate, &gate_waits, &hung);
	rfk_check_freed(test, "memory_failure");

	KUNIT_EXPECT_EQ(test, ret, -EHWPOISON);
	KUNIT_EXPECT_TRUE(test, PageHWPoison(page));
	KUNIT_EXPECT_EQ_MSG(test, waiting, NR_OTHER_WAITING,
			    "memory_failure() of a page of a zone where nothing waits freed the pages waiting in another zone");
	KUNIT_EXPECT_EQ_MSG(test, gate_waits, 0,
			    "memory_failure() waited for a grace period");
	KUNIT_EXPECT_FALSE_MSG(test, hung,
			       "the gate ended its section by its 10 s hang guard");
}

static struct kunit_case rcu_free_poison_bound_cases[] = {
	KUNIT_CASE(rcu_free_poison_bound_other_zone),
	{}
};

static struct kunit_suite rcu_free_poison_bound_suite = {
	.name = "rcu_free_poison_bound",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_poison_bound_cases,
};

kunit_test_suite(rcu_free_poison_bound_suite);

MODULE_DESCRIPTION("KUnit tests for when memory_failure() frees waiting pages");
MODULE_LICENSE("GPL");
