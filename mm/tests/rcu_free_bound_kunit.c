// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the bound on the drains of the pages waiting for a
 * grace period (rcu-free series, patches 7 and 8): a drain takes every
 * CPU's lists and waits for an expedited grace period, which IPIs every
 * CPU, so the paths that drain for a range or a block must not do it for
 * nothing, nor as often as they are called.
 *
 * - alloc_contig_range() of a range that is busy with no waiting page in
 *   it does not drain, however many pages of the zone wait elsewhere;
 * - the compaction check of a zone where nothing waits does not drain;
 * - the compaction check, called many times over a zone whose flagged
 *   folios it migrated, drains far fewer times than it is called.
 *
 * A drain is seen in pgfree_rcu_drain (the drains that freed something).
 * Where the hook is there, the cases hold the waiting lists
 * (rcu_free_hold()), so that the pages they leave waiting are there for
 * every call and only a drain frees them; without it the waiting pages
 * may go back after a normal grace period first, and the checks that
 * need them waiting are skipped by name.
 */

#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/swap.h>

#include "rcu_free_helpers.h"

/* alloc_contig_range() calls on the busy range */
#define CONTIG_CALLS		4
/* Compaction checks in a row */
#define COMPACT_CALLS		16
/* Flagged pages queued before each call */
#define NR_QUEUED		4

/*
 * Allocate up to @nr pages of @zone with @gfp into @pages (others are
 * given back): how many.
 */
static int alloc_in_zone(struct page **pages, struct zone *zone, gfp_t gfp,
			 int nr)
{
	struct page *other[16];
	int got = 0, nr_other = 0, i;

	while (got < nr && nr_other < ARRAY_SIZE(other)) {
		struct page *page = alloc_page(gfp | __GFP_NOWARN);

		if (!page)
			break;
		if (page_zone(page) != zone)
			other[nr_other++] = page;
		else
			pages[got++] = page;
	}
	for (i = 0; i < nr_other; i++)
		__free_page(other[i]);
	return got;
}

/*
 * What keeps the block of the contig case busy: a ramfs folio the case
 * pins, or a page that only looks like one waiting for a grace period
 * (PG_rcu_free, no reference, not free): a poisoned order-0 page, which
 * its free drops instead of queueing it.
 */
enum busy_kind {
	BUSY_PINNED,
	BUSY_POISONED,
};

static const char * const busy_kind_names[] = {
	[BUSY_PINNED] = "pinned folio",
	[BUSY_POISONED] = "dropped poisoned page",
};

static void busy_kind_desc(const enum busy_kind *kind, char *desc)
{
	strscpy(desc, busy_kind_names[*kind], KUNIT_PARAM_DESC_SIZE);
}

static const enum busy_kind busy_kinds[] = { BUSY_PINNED, BUSY_POISONED };
KUNIT_ARRAY_PARAM(busy_kind, busy_kinds, busy_kind_desc);

/* The busy range of the contig case */
struct busy_range {
	struct file *file;
	struct folio *pinned;
	struct page *poisoned;
	struct page *block;
};

static void busy_range_release(void *data)
{
	struct busy_range *b = data;

	truncate_inode_pages(b->file->f_mapping, 0);
	if (b->pinned)
		folio_put(b->pinned);
	if (b->poisoned) {
		/*
		 * Its poison was the case's, not memory_failure()'s: give
		 * it back as an unpoison would, its flag kept (so it waits
		 * for a grace period).
		 */
		ClearPageHWPoison(b->poisoned);
		set_page_count(b->poisoned, 1);
		put_page(b->poisoned);
	}
}

/*
 * Make the first page of @b's block (the case's, with a reference) a
 * poisoned order-0 page with PG_rcu_free, dropped at its free.
 */
static void busy_range_poison(struct kunit *test, struct busy_range *b)
{
	struct page *page = b->block;

	folio_set_rcu_free(page_folio(page));
	SetPageHWPoison(page);
	put_page(page);
	b->poisoned = page;
	KUNIT_ASSERT_EQ_MSG(test, page_ref_count(page), 0,
			    "the poisoned page was not dropped at its free");
	KUNIT_ASSERT_FALSE_MSG(test, PageBuddy(page),
			       "the poisoned page went to the buddy allocator");
}

/*
 * A movable pageblock of the case's, all of it free but its first page,
 * a ramfs folio on the LRU with an extra reference of the case's: its
 * migration fails, so alloc_contig_range() of the block finds the range
 * busy after migrating, and no page of it waits for a grace period.
 * With @kind BUSY_POISONED, that first page is instead a dropped
 * poisoned page (busy_range_poison()).  Before the block's pages are
 * free, @nr pages of its zone go to @pages (how many: *@got), so that
 * none of them is in the range.  Skips when no free pageblock is there.
 */
static struct busy_range *busy_range_setup(struct kunit *test,
					   enum busy_kind kind,
					   struct page **pages, int nr,
					   int *got)
{
	struct busy_range *b;
	struct folio *folio;
	unsigned long i;
	int ret;

	if (kind == BUSY_POISONED && !IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "config: CONFIG_MEMORY_FAILURE is off");
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	b->file = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL),
				"busy");
	/* Gives back what the fields below hold when they are set */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							busy_range_release,
							b), 0);
	b->block = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NORETRY |
			       __GFP_NOWARN, pageblock_order);
	if (!b->block)
		kunit_skip(test, "machine: no free movable pageblock");
	split_page(b->block, pageblock_order);
	*got = alloc_in_zone(pages, page_zone(b->block), GFP_HIGHUSER_MOVABLE,
			     nr);
	for (i = 1; i < pageblock_nr_pages; i++)
		__free_page(b->block + i);
	if (kind == BUSY_POISONED) {
		busy_range_poison(test, b);
		return b;
	}

	folio = page_folio(b->block);
	ret = filemap_add_folio(b->file->f_mapping, folio, 0, GFP_KERNEL);
	if (ret) {
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test, "filemap_add_folio: %d", ret);
	}
	folio_mark_uptodate(folio);
	folio_unlock(folio);
	/* The case's reference: the page cache holds its own */
	b->pinned = folio;
	lru_add_drain_all();
	KUNIT_ASSERT_TRUE_MSG(test, folio_test_lru(folio),
			      "the busy folio is not on an LRU");
	return b;
}

/*
 * CONTIG_CALLS alloc_contig_range() calls of a pageblock that stays busy
 * (a pinned ramfs folio, or a dropped poisoned page with PG_rcu_free that
 * no drain can free) with no waiting page in it, each made while
 * NR_QUEUED flagged pages of the same zone, from outside the block, wait:
 * every call fails with -EBUSY and none drains (no pgfree_rcu_drain);
 * *held*: the zone still has pages waiting.  A drain could not have
 * helped any of the calls.
 */
static void rcu_free_bound_contig_busy_not_waiting(struct kunit *test)
{
	int item = zone_stat_item(test, "nr_free_rcu");
	unsigned long drains0, drains, pfn;
	int i, j, ret, queued = 0, busy = 0;
	struct busy_range *b;
	struct page **pages;
	struct zone *zone;
	bool held;
	int got;

	rfk_require_sync(test);
	rfk_require_contig(test);
	pages = kunit_kcalloc(test, CONTIG_CALLS * NR_QUEUED, sizeof(*pages),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	drains0 = vm_event(test, "pgfree_rcu_drain");
	b = busy_range_setup(test, *(const enum busy_kind *)test->param_value,
			     pages, CONTIG_CALLS * NR_QUEUED, &got);
	pfn = page_to_pfn(b->block);
	zone = page_zone(b->block);
	held = rfk_hold(test, "that the zone's other pages wait at each call");

	for (i = 0; i < CONTIG_CALLS; i++) {
		for (j = 0; j < NR_QUEUED && queued < got; j++)
			rfk_put_flagged(test, pages[queued++]);
		/*
		 * The folio the last call put back is on an LRU again, so
		 * that this call isolates the range and migrates, rather
		 * than find it unmovable
		 */
		lru_add_drain_all();
		ret = rfk_alloc_contig(pfn, pfn + pageblock_nr_pages);
		rfk_check_freed(test, "alloc_contig_range()");
		if (!ret) {
			rfk_free_contig(pfn, pageblock_nr_pages);
			KUNIT_FAIL(test, "call %d: the busy range was allocated",
				   i);
			continue;
		}
		busy += ret == -EBUSY;
	}
	drains = vm_event(test, "pgfree_rcu_drain") - drains0;
	kunit_info(test, "%d calls of %s, %d pages left waiting before them, %lu drains",
		   CONTIG_CALLS, zone->name, queued, drains);
	while (queued < got)
		__free_page(pages[--got]);

	if (!queued)
		kunit_skip(test, "machine: no page of %s to leave waiting",
			   zone->name);
	KUNIT_EXPECT_EQ_MSG(test, busy, CONTIG_CALLS,
			    "calls that found the range busy");
	KUNIT_EXPECT_EQ_MSG(test, drains, 0,
			    "alloc_contig_range() of a busy range with no waiting page drained");
	if (held)
		KUNIT_EXPECT_GT_MSG(test, zone_page_state_snapshot(zone, item),
				    0, "the pages waiting in %s were freed",
				    zone->name);
}

#if MM_HOOK(COMPACTION_FREE_RCU)
/*
 * Free @nr flagged pages of @zone, allocated with @gfp: they wait for a
 * grace period.  Returns how many it queued.
 */
static int queue_waiting(struct kunit *test, struct zone *zone, gfp_t gfp,
			 int nr)
{
	struct page *pages[NR_QUEUED];
	int got, i;

	got = alloc_in_zone(pages, zone, gfp, min(nr, NR_QUEUED));
	for (i = 0; i < got; i++)
		rfk_put_flagged(test, pages[i]);
	return got;
}

/* The zone a GFP_KERNEL page of this task comes from */
static struct zone *kernel_zone(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct zone *zone;

	KUNIT_ASSERT_NOT_NULL(test, page);
	zone = page_zone(page);
	__free_page(page);
	return zone;
}

/* A populated zone of this node other than @not, with nothing waiting */
static struct zone *zone_not_waiting(struct kunit *test, struct zone *not)
{
	pg_data_t *pgdat = NODE_DATA(numa_node_id());
	int item = zone_stat_item(test, "nr_free_rcu");
	struct zone *zone;

	for (zone = pgdat->node_zones;
	     zone < pgdat->node_zones + MAX_NR_ZONES; zone++) {
		if (zone == not || !populated_zone(zone))
			continue;
		if (!zone_page_state_snapshot(zone, item))
			return zone;
	}
	kunit_skip(test, "machine: no second zone with nothing waiting");
	return NULL;
}

/*
 * The check sync-light compaction makes when its migration scanner
 * leaves a block it migrated flagged folios from, on a compact_control
 * of the case's, as one compact_zone() call (its own fields cleared).
 */
static bool compaction_check(struct zone *zone)
{
	struct compact_control cc = {
		.zone = zone,
		.mode = MIGRATE_SYNC_LIGHT,
		.order = 3,
		.rcu_free_migrated = true,
	};

	return compaction_free_rcu_hook(&cc);
}
#endif

/*
 * COMPACT_CALLS compaction checks (compaction_free_rcu(), a hook) of a
 * zone where nothing waits, each as if the scanner had isolated flagged
 * folios, while NR_QUEUED flagged pages of another zone wait: none
 * drains (no pgfree_rcu_drain, each returns false); *held*: the other
 * zone's pages still wait.
 */
static void rcu_free_bound_compaction_nothing_waiting(struct kunit *test)
{
#if MM_HOOK(COMPACTION_FREE_RCU)
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	int item = zone_stat_item(test, "nr_free_rcu");
	struct zone *busy, *idle;
	int i, synced = 0;
	bool held;

	rfk_require_sync(test);
	held = rfk_hold(test, "that the other zone's pages still wait");
	busy = kernel_zone(test);
	idle = zone_not_waiting(test, busy);
	KUNIT_ASSERT_GT(test, queue_waiting(test, busy, GFP_KERNEL, NR_QUEUED),
			0);

	for (i = 0; i < COMPACT_CALLS; i++) {
		if (zone_page_state_snapshot(idle, item))
			kunit_skip(test, "machine: something else freed into %s meanwhile",
				   idle->name);
		synced += compaction_check(idle);
	}
	rfk_check_freed(test, "compaction");

	KUNIT_EXPECT_EQ_MSG(test, synced, 0,
			    "checks of %s, where nothing waits, that synced",
			    idle->name);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	if (held)
		KUNIT_EXPECT_GT_MSG(test, zone_page_state_snapshot(busy, item),
				    0, "the pages waiting in %s were freed",
				    busy->name);
#else
	kunit_skip(test, MM_HOOK_ABSENT "%s", mm_hook_name_COMPACTION_FREE_RCU);
#endif
}

/*
 * COMPACT_CALLS compaction checks in a row (compaction_free_rcu(), a
 * hook), each of a zone where the folios it migrated wait: NR_QUEUED
 * flagged pages of that zone freed before each check (*held*: they wait
 * for it).  Each check stands for a compact_zone() call, as many direct
 * compactions of THP faults make: together they drain far fewer times
 * than they are called, at most COMPACT_CALLS / 4 (pgfree_rcu_drain);
 * *held*: at least once (compaction still frees what it migrated).
 */
static void rcu_free_bound_compaction_rate(struct kunit *test)
{
#if MM_HOOK(COMPACTION_FREE_RCU)
	unsigned long drains0, drains, t0, elapsed, allowed;
	int i, synced = 0, queued = 0;
	struct zone *zone;
	bool held;

	rfk_require_sync(test);
	held = rfk_hold(test, "that the checks found pages waiting");
	zone = kernel_zone(test);

	drains0 = vm_event(test, "pgfree_rcu_drain");
	t0 = jiffies;
	for (i = 0; i < COMPACT_CALLS; i++) {
		queued += queue_waiting(test, zone, GFP_KERNEL, NR_QUEUED);
		synced += compaction_check(zone);
	}
	elapsed = jiffies - t0;
	drains = vm_event(test, "pgfree_rcu_drain") - drains0;
	rfk_check_freed(test, "compaction");
	kunit_info(test, "%d checks of %s in %lu jiffies: %d synced, %lu drains",
		   COMPACT_CALLS, zone->name, elapsed, synced, drains);

	KUNIT_ASSERT_GE(test, queued, COMPACT_CALLS);
#ifdef RCU_FREE_SYNC_INTERVAL
	/*
	 * A slow machine stretches the loop over more turns of the rate
	 * limit: allow one drain per turn that passed, and say so when the
	 * loop took so long that no bound could show.
	 */
	allowed = max_t(unsigned long, COMPACT_CALLS / 4,
			elapsed / RCU_FREE_SYNC_INTERVAL + 1);
	if (allowed >= COMPACT_CALLS)
		kunit_skip(test,
			   "machine: %d checks took %lu jiffies, too long for a bound",
			   COMPACT_CALLS, elapsed);
#else
	allowed = COMPACT_CALLS / 4;
#endif
	KUNIT_EXPECT_LE_MSG(test, drains, allowed,
			    "drains of %d compaction checks in a row (%lu jiffies)",
			    COMPACT_CALLS, elapsed);
	KUNIT_EXPECT_LE(test, synced, allowed);
	if (held)
		KUNIT_EXPECT_GE_MSG(test, drains, 1,
				    "no check freed what compaction migrated");
#else
	kunit_skip(test, MM_HOOK_ABSENT "%s", mm_hook_name_COMPACTION_FREE_RCU);
#endif
}

static struct kunit_case rcu_free_bound_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_bound_contig_busy_not_waiting,
			 busy_kind_gen_params),
	KUNIT_CASE(rcu_free_bound_compaction_nothing_waiting),
	KUNIT_CASE(rcu_free_bound_compaction_rate),
	{}
};

static struct kunit_suite rcu_free_bound_suite = {
	.name = "rcu_free_bound",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_bound_cases,
};

kunit_test_suite(rcu_free_bound_suite);

MODULE_DESCRIPTION("KUnit tests for the bound on the drains of the pages waiting for a grace period");
MODULE_LICENSE("GPL");
