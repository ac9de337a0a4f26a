// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the deferred free of PG_rcu_free folios (rcu-free series,
 * patches 1-9, 19): a flagged folio goes back to the allocator only after an RCU
 * grace period, and everything that needs the memory back sooner can get it.
 *
 * Strategy: nothing sets PG_rcu_free in these patches, so each case sets it
 * on pages of its own with folio_set_rcu_free() and drops the last
 * reference.  No grace period is waited out.  Cases about the grace period
 * free inside their own rcu_read_lock() section, so none can end before
 * they look.  Cases about what has to free the waiting pages early
 * (drain before OOM, alloc_contig_range(), compaction, memory failure)
 * hold the lists while they free (rcu_free_hold() of
 * CONFIG_DEBUG_PAGE_RCU_FREE, which this suite's Kconfig entry implies):
 * what they free then stays on the lists with no grace period, normal or
 * expedited, started for it, and only the code under test can free it (the
 * case's exit releases the hold).  Holding a real reader instead would
 * also stall the synchronize_rcu() calls on those paths (lru_cache_disable()
 * in alloc_contig_range(), for one).  The expedite cases make the zone of
 * the pages they free really short of memory (ZONE_DMA, filled) or leave
 * it plentiful.  Counters are read by name (nr_free_rcu, pgfree_rcu,
 * pgfree_rcu_expedite, pgfree_rcu_drain), so a tree that lacks the patch
 * adding one fails with a message saying so.
 *
 * The invariant itself is checked by the series: with patch 19,
 * CONFIG_DEBUG_PAGE_RCU_FREE also makes every waiting folio remember the
 * grace period it needs, and each path that hands waiting folios back
 * counts those whose grace period had not completed (rcu_free_nr_early()).
 * Every case's exit waits for what the case left and expects that count
 * unchanged, so each case is also a check that the path it drives
 * (grace-period work, expedite, drain before OOM, rcu_free_sync() from
 * contig allocation, compaction and memory failure) waited.
 * rcu_free_wait_grace() only waits for grace periods already started; a
 * case that held the lists releases them first (rcu_free_release(), a
 * KUnit action the exit runs early).
 *
 * Without CONFIG_DEBUG_PAGE_RCU_FREE (off, CONFIG_PAGE_RCU_FREE off, or
 * rcu-free not applied) every case skips and says why.
 */

#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/compaction.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/pipe_fs_i.h>
#include <linux/rcupdate.h>
#include <linux/shrinker.h>
#include <linux/sort.h>
#include <linux/sched/mm.h>
#include <linux/splice.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "../page_alloc.h"
#include "mm_test_util.h"
#include "vmstat_by_name.h"

#if IS_ENABLED(CONFIG_DEBUG_PAGE_RCU_FREE)

/* Pages of ZONE_DMA the drain cases can hold at most */
#define DMA_MAX_PAGES	(SZ_32M >> PAGE_SHIFT)

/* The byte at @off of the page at @pfn */
static u8 pattern(unsigned long pfn, unsigned int off)
{
	return mm_test_pattern(((u64)pfn << PAGE_SHIFT) + off, 0);
}

static void fill_pattern(struct page *page, unsigned int nr)
{
	unsigned int i, off;

	for (i = 0; i < nr; i++) {
		u8 *p = page_address(page + i);

		for (off = 0; off < PAGE_SIZE; off++)
			p[off] = pattern(page_to_pfn(page + i), off);
	}
}

/* Number of bytes of @nr pages from @page that no longer hold the pattern */
static unsigned long bad_bytes(struct page *page, unsigned int nr)
{
	unsigned long bad = 0;
	unsigned int i, off;

	for (i = 0; i < nr; i++) {
		const u8 *p = page_address(page + i);

		for (off = 0; off < PAGE_SIZE; off++)
			bad += p[off] != pattern(page_to_pfn(page + i), off);
	}
	return bad;
}

/* Drop the last reference on @page, whose free must wait */
static void put_flagged(struct page *page)
{
	folio_set_rcu_free(page_folio(page));
	put_page(page);
}

/*
 * @nr pages from alloc_page(@gfp), the last one from alloc_page(@gfp_last):
 * all of them, or the case ends with none left allocated.
 */
static void alloc_all(struct kunit *test, struct page **pages, int nr,
		      gfp_t gfp, gfp_t gfp_last)
{
	int i;

	for (i = 0; i < nr; i++) {
		pages[i] = alloc_page(i == nr - 1 ? gfp_last : gfp);
		if (!pages[i])
			break;
	}
	if (i == nr)
		return;
	while (i--)
		__free_page(pages[i]);
	KUNIT_FAIL_AND_ABORT(test, "could not allocate %d pages", nr);
}

static void hold_release(void *unused)
{
	rcu_free_release();
}

/*
 * What the case frees from now on waits on the lists with no grace period
 * started for it: only a drain frees it.  A KUnit action releases it; the
 * case's exit runs that action early, before it waits for what is left.
 */
static void hold_normal_free(struct kunit *test)
{
	rcu_free_hold();
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, hold_release,
							NULL), 0);
}

/* Pages the series handed back before their grace period ended */
static unsigned long early_frees(void)
{
#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_EARLY_CHECK)
	return rcu_free_nr_early();
#else
	return 0;
#endif
}

static unsigned long early_at_init;

/* Every case starts and ends with nothing waiting */
static int rcu_free_test_init(struct kunit *test)
{
	rcu_free_wait_grace();
	early_at_init = early_frees();
	return 0;
}

static void rcu_free_test_exit(struct kunit *test)
{
	/* The grace period for what the case left waiting (held or not) */
	kunit_release_action(test, hold_release, NULL);
	rcu_free_wait_grace();
	KUNIT_EXPECT_EQ_MSG(test, early_frees() - early_at_init, 0,
			    "pages freed before their grace period ended");
}

/*
 * Every case's exit relies on the grace-period check of patch 19; without
 * it the exits check nothing, and this case says so instead of the others
 * passing quietly.
 */
static void rcu_free_grace_period_check_present(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_EARLY_CHECK))
		KUNIT_FAIL(test,
			   "no rcu_free_nr_early(): patch 19 is not applied, no exit checks the grace period");
}

static const unsigned int folio_orders[] = { 0, 2 };

static void order_desc(const unsigned int *order, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "order-%u", *order);
}

KUNIT_ARRAY_PARAM(folio_order, folio_orders, order_desc);

/*
 * A flagged folio whose last reference goes is neither free nor reusable
 * until a grace period ends, and is given back after one; nr_free_rcu and
 * pgfree_rcu move by exactly its page count.
 */
static void rcu_free_flagged_waits_for_grace_period(struct kunit *test)
{
	const unsigned int order = *(const unsigned int *)test->param_value;
	const long nr = 1L << order;
	unsigned long ev0 = vm_event(test, "pgfree_rcu");
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	long waiting0 = zone_stat_sum(nr_free_rcu);
	long waiting_in, waiting_after;
	bool flag_in, buddy_in, same;
	struct folio *folio, *other;
	int ref_in;

	folio = folio_alloc(GFP_KERNEL, order);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_set_rcu_free(folio);

	rcu_read_lock();
	migrate_disable();
	folio_put(folio);
	ref_in = folio_ref_count(folio);
	flag_in = folio_test_rcu_free(folio);
	buddy_in = PageBuddy(&folio->page);
	waiting_in = zone_stat_sum(nr_free_rcu);
	/* This CPU's pcp lists would hand a freed folio straight back */
	other = folio_alloc(GFP_NOWAIT | __GFP_NOWARN, order);
	same = other == folio;
	if (other)
		folio_put(other);
	migrate_enable();
	rcu_read_unlock();

	KUNIT_EXPECT_EQ(test, ref_in, 0);
	KUNIT_EXPECT_TRUE_MSG(test, flag_in, "freed before a grace period");
	KUNIT_EXPECT_FALSE(test, buddy_in);
	KUNIT_EXPECT_FALSE_MSG(test, same, "handed out again inside the reader");
	KUNIT_EXPECT_EQ(test, waiting_in - waiting0, nr);
	KUNIT_EXPECT_EQ(test, (long)(vm_event(test, "pgfree_rcu") - ev0), nr);

	rcu_free_wait_grace();
	waiting_after = zone_stat_sum(nr_free_rcu);
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_rcu_free(folio),
			       "still waiting after a grace period");
	KUNIT_EXPECT_EQ(test, waiting_after, waiting0);
}

/* A folio without the flag is freed at once, and nothing is counted */
static void rcu_free_unflagged_freed_at_once(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	unsigned long ev0 = vm_event(test, "pgfree_rcu");
	long waiting0 = zone_stat_sum(nr_free_rcu);
	unsigned long queued_in;
	long waiting_in;
	struct page *page;

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);

	rcu_read_lock();
	put_page(page);
	queued_in = rcu_free_nr_queued();
	waiting_in = zone_stat_sum(nr_free_rcu);
	rcu_read_unlock();

	KUNIT_EXPECT_EQ(test, queued_in, 0);
	KUNIT_EXPECT_EQ(test, waiting_in, waiting0);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu"), ev0);
}

/* Attempts at freeing a folio while the first one's grace period runs */
#define IN_FLIGHT_TRIES	100

/*
 * The two-list rule: a folio freed while a grace period runs for its
 * CPU's batch waits for the next one.  Both come back through the
 * grace-period work alone (nothing stranded on the second list), and the
 * grace-period check has nothing to count.
 */
static void rcu_free_freed_in_flight_waits_for_next(struct kunit *test)
{
	long waiting0 = zone_stat(test, "nr_free_rcu");
	struct folio *first, *second;
	bool overlapped = false;
	unsigned long cookie;
	int try;

	if (!IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_EARLY_CHECK))
		KUNIT_FAIL_AND_ABORT(test,
				     "no rcu_free_nr_early(): patch 19 is not applied");

	for (try = 0; try < IN_FLIGHT_TRIES && !overlapped; try++) {
		first = folio_alloc(GFP_KERNEL, 0);
		second = folio_alloc(GFP_KERNEL, 0);
		KUNIT_ASSERT_NOT_NULL(test, first);
		KUNIT_ASSERT_NOT_NULL(test, second);
		folio_set_rcu_free(first);
		folio_set_rcu_free(second);

		migrate_disable();
		folio_put(first);
		/* A grace period that starts from now on serves @first */
		cookie = get_state_synchronize_rcu();
		while (get_state_synchronize_rcu() == cookie)
			cond_resched();
		folio_put(second);
		/* Only if @first was still waiting did @second overlap it */
		overlapped = folio_test_rcu_free(first);
		migrate_enable();

		rcu_free_wait_grace();
	}

	KUNIT_ASSERT_TRUE_MSG(test, overlapped,
			      "no free overlapped a grace period in %d tries",
			      IN_FLIGHT_TRIES);
	KUNIT_EXPECT_EQ_MSG(test, rcu_free_nr_queued(), 0,
			    "stranded on the lists after their grace periods");
	KUNIT_EXPECT_EQ(test, zone_stat(test, "nr_free_rcu"), waiting0);
	KUNIT_EXPECT_EQ_MSG(test, early_frees() - early_at_init, 0,
			    "the second folio joined the first one's grace period");
}

/*
 * A reader inside rcu_read_lock() keeps reading the old contents while the
 * freeing CPU allocates and overwrites pages; they differ from the old one.
 */
static void rcu_free_reader_sees_old_contents(struct kunit *test)
{
	const int nr_new = 64;
	struct page *page, **new;
	unsigned long bad;
	int i, reused = 0;

	new = kunit_kcalloc(test, nr_new, sizeof(*new), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, new);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	fill_pattern(page, 1);

	rcu_read_lock();
	migrate_disable();
	put_flagged(page);
	for (i = 0; i < nr_new; i++) {
		new[i] = alloc_page(GFP_NOWAIT | __GFP_NOWARN);
		if (!new[i])
			break;
		reused += new[i] == page;
		memset(page_address(new[i]), 0xff, PAGE_SIZE);
	}
	bad = bad_bytes(page, 1);
	for (i = 0; i < nr_new && new[i]; i++)
		__free_page(new[i]);
	migrate_enable();
	rcu_read_unlock();

	KUNIT_EXPECT_EQ(test, reused, 0);
	KUNIT_EXPECT_EQ_MSG(test, bad, 0, "the reader saw changed bytes");
}

#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_EXPEDITE)
static int fill_zone_dma(struct page **pages, int n, bool memalloc);

/* Pages a case took to make ZONE_DMA short, given back when it ends */
struct dma_fill {
	struct page **pages;
	int nr;
};

static void dma_fill_free(void *data)
{
	struct dma_fill *fill = data;

	while (fill->nr > 0)
		__free_page(fill->pages[--fill->nr]);
}
#endif

/*
 * Defer RCU_FREE_EXPEDITE_PAGES pages on one CPU inside a read-side
 * section (no normal grace period can take any of them meanwhile).  The
 * last one, whose free decides, is in a zone really short of memory if
 * @is_short (ZONE_DMA, filled up by the case), else in one with plenty
 * free.  The expedites that ran.
 */
static unsigned long pile_up(struct kunit *test, bool is_short)
{
#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_EXPEDITE)
	const int nr = RCU_FREE_EXPEDITE_PAGES;
	unsigned long ev0, free_in, high;
	struct dma_fill *fill;
	struct page **pages;
	struct zone *zone;
	int i;

	if (is_short && !IS_ENABLED(CONFIG_ZONE_DMA))
		kunit_skip(test, "needs ZONE_DMA: a zone it can fill without starving the rest");
	pages = kunit_kcalloc(test, nr, sizeof(*pages), GFP_KERNEL);
	fill = kunit_kzalloc(test, sizeof(*fill), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	KUNIT_ASSERT_NOT_NULL(test, fill);
	fill->pages = kunit_kcalloc(test, DMA_MAX_PAGES, sizeof(*fill->pages),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fill->pages);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dma_fill_free,
							fill), 0);
	alloc_all(test, pages, nr, GFP_KERNEL,
		  is_short ? GFP_KERNEL | GFP_DMA : GFP_KERNEL);
	zone = page_zone(pages[nr - 1]);
	if (is_short)
		fill->nr = fill_zone_dma(fill->pages, 0, false);
	ev0 = vm_event(test, "pgfree_rcu_expedite");

	rcu_read_lock();
	migrate_disable();
	free_in = zone_page_state(zone, NR_FREE_PAGES);
	high = high_wmark_pages(zone);
	for (i = 0; i < nr; i++)
		put_flagged(pages[i]);
	migrate_enable();
	rcu_read_unlock();

	/* Runs the expedite work too, if it was queued */
	rcu_free_wait_grace();
	KUNIT_ASSERT_EQ_MSG(test, free_in < high, is_short,
			    "%s: %lu pages free, high watermark %lu",
			    zone->name, free_in, high);
	return vm_event(test, "pgfree_rcu_expedite") - ev0;
#else
	KUNIT_FAIL_AND_ABORT(test, "no expedite: patch 5 is not applied");
	return 0;
#endif
}

/*
 * A CPU's pile-up past the threshold, the last page in a zone below its
 * high watermark, expedites once
 */
static void rcu_free_expedite_when_short(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pile_up(test, true), 1);
}

/*
 * The same pile-up, the last page in a zone with plenty free, waits for a
 * normal grace period
 */
static void rcu_free_no_expedite_when_plentiful(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pile_up(test, false), 0);
}

#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_DRAIN)
/* Inputs of the drain-before-OOM decision, and what it must decide */
struct drain_case {
	const char *name;
	unsigned int order;
	unsigned long waiting, free, reclaimable;
	bool dying;
	int drains;
	bool helps;
};

/*
 * The zone has a min watermark of 1000 and no free block of any order:
 * a check at order > 0 that wanted one could never pass.
 */
#define MIN_WMARK	1000
static const struct drain_case drain_cases[] = {
	{ "nothing waiting", 0, 0, 5000, 0, false, 0, false },
	{ "waiting+free at min", 0, 400, 600, 0, false, 0, false },
	{ "waiting+free above min", 0, 400, 601, 0, false, 0, true },
	{ "reclaimable counted", 0, 300, 300, 401, false, 0, true },
	{ "waiting alone above min", 0, 1001, 0, 0, false, 0, true },
	{ "order-2 needs its 4 pages", 2, 500, 503, 0, false, 0, false },
	{ "order-2 above min by 4", 2, 500, 504, 0, false, 0, true },
	{ "order-9 counted at order 0", 9, 5000, 0, 0, false, 0, true },
	{ "dying task", 0, 5000, 0, 0, true, 0, false },
	{ "last drain of the streak", 0, 5000, 0, 0, false,
	  RCU_FREE_MAX_DRAINS - 1, true },
	{ "streak bound reached", 0, 5000, 0, 0, false,
	  RCU_FREE_MAX_DRAINS, false },
};

KUNIT_ARRAY_PARAM_DESC(drain, drain_cases, name);
#define DRAIN_DECISION_CASE \
	KUNIT_CASE_PARAM(rcu_free_drain_decision, drain_gen_params)
#else
#define DRAIN_DECISION_CASE KUNIT_CASE(rcu_free_drain_decision)
#endif

/* The drain-before-OOM decision on constructed inputs */
static void rcu_free_drain_decision(struct kunit *test)
{
#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_DRAIN)
	const struct drain_case *c = test->param_value;
	struct rcu_free_drain_query q = {
		.order = c->order,
		.highest_zoneidx = 0,
		.alloc_flags = ALLOC_WMARK_MIN,
		.waiting = c->waiting,
		.free = c->free,
		.reclaimable = c->reclaimable,
		.dying = c->dying,
		.drains = c->drains,
	};

	q.zone = kunit_kzalloc(test, sizeof(*q.zone), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q.zone);
	q.zone->_watermark[WMARK_MIN] = MIN_WMARK;
	KUNIT_EXPECT_EQ(test, rcu_free_drain_helps(&q), c->helps);
#else
	KUNIT_FAIL(test, "no drain before OOM: patch 6 is not applied");
#endif
}

/*
 * Drop the watermark boost that filling @zone may have set (a fallback
 * that steals a pageblock boosts it by one): kswapd drops it once it has
 * balanced the zone, and the cases that fill a zone keep kswapd away, so
 * it would stay and raise the min watermark by a pageblock.
 */
static void zone_drop_boost(struct zone *zone)
{
	unsigned long flags;

	spin_lock_irqsave(&zone->lock, flags);
	zone->watermark_boost = 0;
	spin_unlock_irqrestore(&zone->lock, flags);
}

/*
 * Take every page of ZONE_DMA the allocator gives without reserves into
 * @pages, from @n on; with @memalloc, the reserves too.  The new count.
 */
static int fill_zone_dma(struct page **pages, int n, bool memalloc)
{
	unsigned int noreclaim = 0;
	struct page *page;

	if (memalloc)
		noreclaim = memalloc_noreclaim_save();
	while (n < DMA_MAX_PAGES) {
		page = alloc_page(GFP_KERNEL | GFP_DMA | __GFP_NORETRY |
				  __GFP_NOWARN);
		if (!page)
			break;
		pages[n++] = page;
	}
	if (memalloc)
		memalloc_noreclaim_restore(noreclaim);
	return n;
}

static struct page **dma_pages(struct kunit *test)
{
	struct page **pages;

	if (!IS_ENABLED(CONFIG_ZONE_DMA))
		kunit_skip(test, "needs ZONE_DMA: a zone it can fill without starving the rest");
	pages = kunit_kcalloc(test, DMA_MAX_PAGES, sizeof(*pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	return pages;
}

/*
 * ZONE_DMA is filled up to its min watermark and all of it freed with the
 * flag and held back: an allocation from it that may not use the reserves
 * succeeds, because reclaim drains the waiting pages instead of failing.
 */
static void rcu_free_drain_before_oom(struct kunit *test)
{
	struct page **pages = dma_pages(test);
	/* Counters first: a missing one must not leave the zone filled */
	long waiting0 = zone_stat(test, "nr_free_rcu");
	unsigned long ev0 = vm_event(test, "pgfree_rcu_drain");
	struct page *page;
	long left;
	int i, n;

	n = fill_zone_dma(pages, 0, false);
	KUNIT_ASSERT_GT(test, n, 0);

	hold_normal_free(test);
	for (i = 0; i < n; i++)
		put_flagged(pages[i]);
	page = alloc_page(GFP_KERNEL | GFP_DMA | __GFP_RETRY_MAYFAIL |
			  __GFP_NOWARN);
	left = zone_stat(test, "nr_free_rcu") - waiting0;
	if (page)
		__free_page(page);

	KUNIT_EXPECT_NOT_NULL_MSG(test, page, "%d pages waiting in ZONE_DMA", n);
	KUNIT_EXPECT_EQ_MSG(test, left, 0, "the waiting pages were not drained");
	KUNIT_EXPECT_GE(test, vm_event(test, "pgfree_rcu_drain") - ev0, 1);
}

/*
 * ZONE_DMA is emptied, reserves included, and only its even pages are
 * freed with the flag: after the drain no two free pages are buddies, so
 * an order-3 allocation still fails.  It must fail, after one drain,
 * rather than retry forever or OOM-kill.
 */
static void rcu_free_drain_that_cannot_help_ends(struct kunit *test)
{
	struct page **pages = dma_pages(test);
	/* Counters first: a missing one must not leave the zone filled */
	long waiting0 = zone_stat(test, "nr_free_rcu");
	unsigned long ev0 = vm_event(test, "pgfree_rcu_drain");
	struct page *page;
	int i, n, held = 0;
	long left;

	drain_all_pages(NULL);
	n = fill_zone_dma(pages, 0, false);
	n = fill_zone_dma(pages, n, true);
	KUNIT_ASSERT_GT(test, n, 0);

	hold_normal_free(test);
	for (i = 0; i < n; i++) {
		if (page_to_pfn(pages[i]) & 1)
			pages[held++] = pages[i];
		else
			put_flagged(pages[i]);
	}
	page = alloc_pages(GFP_KERNEL | GFP_DMA | __GFP_RETRY_MAYFAIL |
			    __GFP_NOWARN, 3);
	left = zone_stat(test, "nr_free_rcu") - waiting0;
	if (page)
		__free_pages(page, 3);
	for (i = 0; i < held; i++)
		__free_page(pages[i]);

	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ_MSG(test, left, 0, "the waiting pages were not drained");
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - ev0, 1);
}

/* Pages a batch of the drain streak case queues */
#define STREAK_BATCH	128

/* A drain streak case: where reclaim reports progress, what must happen */
struct streak_case {
	const char *name;
	/* The reclaim round (from 1) that reports progress; 0: none */
	int progress_round;
	int drains;
};

#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_DRAIN)
static const struct streak_case streak_cases[] = {
	{ "no progress: the streak ends at the bound", 0,
	  RCU_FREE_MAX_DRAINS },
	{ "progress after the bound: a new streak", RCU_FREE_MAX_DRAINS + 1,
	  2 * RCU_FREE_MAX_DRAINS },
};

KUNIT_ARRAY_PARAM_DESC(streak, streak_cases, name);
#define DRAIN_STREAK_CASE \
	KUNIT_CASE_PARAM(rcu_free_drain_streak, streak_gen_params)

/*
 * What the drain streak case's shrinker works with.  Direct reclaim calls
 * it, in the allocating task, in every round before the allocator decides
 * whether to drain: each round after a drain it frees a new batch of even
 * ZONE_DMA pages flagged (held: they wait), so that every round finds
 * pages worth draining; in round @progress_round it also frees one page
 * and reports it reclaimed.
 */
struct streak {
	struct shrinker *shrinker;
	struct task_struct *task;
	/* The held ZONE_DMA pages: @nr_even even ones first, then the odd */
	struct page **pages;
	int nr, nr_even;
	struct page *last;	/* first page of the last batch queued */
	int rounds;		/* batches queued */
	int progress_round;
};

static unsigned long streak_count(struct shrinker *shrinker,
				  struct shrink_control *sc)
{
	struct streak *s = shrinker->private_data;

	if (current != s->task)
		return 0;
	/* With seeks 0 and batch 1: one scan in every call, at any priority */
	return 2;
}

static unsigned long streak_scan(struct shrinker *shrinker,
				 struct shrink_control *sc)
{
	struct streak *s = shrinker->private_data;
	struct page **batch;
	int i;

	if (current != s->task)
		return SHRINK_STOP;
	/* The last batch still waits: this round has its pages already */
	if (s->last && folio_test_rcu_free(page_folio(s->last)))
		return 0;
	/* The last even page is the progress one */
	if ((s->rounds + 1) * STREAK_BATCH >= s->nr_even)
		return SHRINK_STOP;
	batch = s->pages + s->rounds * STREAK_BATCH;
	s->last = batch[0];
	for (i = 0; i < STREAK_BATCH; i++) {
		put_flagged(batch[i]);
		batch[i] = NULL;
	}
	if (++s->rounds == s->progress_round) {
		__free_page(s->pages[s->nr_even - 1]);
		s->pages[s->nr_even - 1] = NULL;
		mm_account_reclaimed_pages(1);
	}
	return 0;
}

static void streak_release(void *data)
{
	struct streak *s = data;
	int i;

	shrinker_free(s->shrinker);
	for (i = 0; i < s->nr; i++)
		if (s->pages[i])
			__free_page(s->pages[i]);
}
#else
#define DRAIN_STREAK_CASE KUNIT_CASE(rcu_free_drain_streak)
#endif

/*
 * The drain before OOM through a real allocation: an order-3 allocation
 * from ZONE_DMA, whose free pages can never form an order-3 block, with
 * pages waiting again before each decision.  Within a streak of reclaim
 * rounds without progress it drains RCU_FREE_MAX_DRAINS times (each one
 * counted in pgfree_rcu_drain) and then fails; a round with progress
 * starts a new streak.  The shrinker queues one batch more than was
 * drained: the round that found the bound reached.
 */
static void rcu_free_drain_streak(struct kunit *test)
{
#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_DRAIN)
	const struct streak_case *c = test->param_value;
	struct page **pages = dma_pages(test);
	/* Counters first: a missing one must not leave the zone filled */
	unsigned long ev0 = vm_event(test, "pgfree_rcu_drain");
	struct page *page;
	struct streak *s;
	int i, n, odd = 0;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->task = current;
	s->progress_round = c->progress_round;
	s->shrinker = shrinker_alloc(0, "rcu_free-kunit-streak");
	KUNIT_ASSERT_NOT_NULL(test, s->shrinker);
	s->shrinker->count_objects = streak_count;
	s->shrinker->scan_objects = streak_scan;
	s->shrinker->seeks = 0;
	s->shrinker->batch = 1;
	s->shrinker->private_data = s;
	s->pages = pages;

	drain_all_pages(NULL);
	n = fill_zone_dma(pages, 0, false);
	n = fill_zone_dma(pages, n, true);
	/* Even pages first, for the batches; the odd ones stay held */
	for (i = 0; i < n - odd; ) {
		if (page_to_pfn(pages[i]) & 1) {
			swap(pages[i], pages[n - 1 - odd]);
			odd++;
		} else {
			i++;
		}
	}
	s->nr = n;
	s->nr_even = n - odd;
	if (n)
		zone_drop_boost(page_zone(pages[0]));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, streak_release, s),
			0);
	KUNIT_ASSERT_GT_MSG(test, s->nr_even,
			    (2 * RCU_FREE_MAX_DRAINS + 1) * STREAK_BATCH,
			    "even pages of ZONE_DMA");
	hold_normal_free(test);
	shrinker_register(s->shrinker);

	/*
	 * Without __GFP_FS and __GFP_IO: no compaction, and no other shrinker
	 * frees slab pages for this reclaim to count as progress.
	 */
	page = alloc_pages((GFP_NOIO & ~__GFP_KSWAPD_RECLAIM) | GFP_DMA |
			   __GFP_RETRY_MAYFAIL | __GFP_NOWARN, 3);
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - ev0,
			c->drains);
	KUNIT_EXPECT_EQ_MSG(test, s->rounds, c->drains + 1,
			    "batches queued: one per drain and the last");
#else
	KUNIT_FAIL(test, "no drain before OOM: patch 6 is not applied");
#endif
}

/* How a case lays out the pageblock it hands to alloc_contig_range() */
struct contig_case {
	const char *name;
	/* The range starts one page in; the page below it is free */
	bool unaligned;
	/* The pages of the range wait for a grace period, held back */
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
		kunit_skip(test, "no free pageblock");
	split_page(block, pageblock_order);
	return block;
}

/*
 * alloc_contig_range() of a pageblock whose pages wait for a grace period
 * frees them (one drain) instead of failing.  With the range starting one
 * page in, the freed pages merge with the free page below it, and the
 * range is found inside that buddy only if it is looked up again after
 * the drain.  With nothing waiting, no drain.
 */
static void rcu_free_alloc_contig_range(struct kunit *test)
{
#ifdef CONFIG_CONTIG_ALLOC
	const struct contig_case *c = test->param_value;
	const unsigned long nr = pageblock_nr_pages;
	unsigned long pfn, start, i, ev0;
	struct page *block;
	int ret;

	block = alloc_split_pageblock(test, GFP_KERNEL);
	pfn = page_to_pfn(block);
	start = pfn + c->unaligned;

	ev0 = vm_event(test, "pgfree_rcu_drain");
	hold_normal_free(test);
	for (i = 0; i < nr; i++) {
		if (c->waiting && pfn + i >= start)
			put_flagged(pfn_to_page(pfn + i));
		else
			__free_page(pfn_to_page(pfn + i));
	}
	ret = alloc_contig_range(start, pfn + nr, ACR_FLAGS_NONE,
				 GFP_KERNEL | __GFP_NOWARN);
	if (!ret)
		free_contig_range(start, pfn + nr - start);

	KUNIT_EXPECT_EQ(test, ret, 0);
	if (c->waiting)
		KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - ev0, 1);
	else
		KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - ev0, 0);
#else
	kunit_skip(test, "needs CONTIG_ALLOC");
#endif
}

/* Open @name on @mnt for the current case; closed when the case ends */
static struct file *case_file(struct kunit *test, struct vfsmount *mnt,
			      const char *name)
{
	struct file *file;

	file = file_open_root_mnt(mnt, name, O_CREAT | O_RDWR, 0600);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput, file), 0);
	return file;
}

/*
 * A one-page ramfs file whose folio is clean, on the LRU and flagged: what
 * soft offline invalidates and what stealing used to take.  ramfs keeps
 * its folios dirty; clearing that stands in for writeback.
 */
static struct file *cached_flagged_folio(struct kunit *test, const char *name,
					 struct folio **folio)
{
	struct vfsmount *mnt = mm_test_mount(test, "ramfs", NULL);
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;
	void *data;

	file = case_file(test, mnt, name);
	data = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memset(data, 0x5a, PAGE_SIZE);
	ret = kernel_write(file, data, PAGE_SIZE, &pos);
	KUNIT_ASSERT_EQ(test, ret, PAGE_SIZE);

	*folio = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(*folio));
	folio_clear_dirty_for_io(*folio);
	folio_set_rcu_free(*folio);
	folio_unlock(*folio);
	folio_put(*folio);
	lru_add_drain_all();
	return file;
}

/*
 * alloc_contig_range() of a pageblock holding flagged tmpfs folios in use:
 * it migrates them, and their old copies wait for a grace period (held
 * back), so the range is free only once it has freed them.  The file reads
 * back the same afterwards.  The pageblock is a movable one the case
 * allocated: it frees the first pages of it just before writing the file,
 * so the file's folios come from this CPU's lists, then the rest.
 */
static void rcu_free_alloc_contig_migrated(struct kunit *test)
{
#ifdef CONFIG_CONTIG_ALLOC
	const unsigned int nr_folios = 16;
	unsigned long start, i, ev0;
	unsigned int in_block = 0;
	struct file *file;
	struct folio *folio;
	struct page *block;
	loff_t pos = 0;
	u8 *data, *back;
	int ret;

	file = case_file(test, mm_test_mount(test, "tmpfs", "never"),
			 "contig");
	data = kunit_kmalloc(test, nr_folios * PAGE_SIZE, GFP_KERNEL);
	back = kunit_kzalloc(test, nr_folios * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	KUNIT_ASSERT_NOT_NULL(test, back);
	for (i = 0; i < nr_folios * PAGE_SIZE; i++)
		data[i] = pattern(i / PAGE_SIZE, i % PAGE_SIZE);

	block = alloc_split_pageblock(test, GFP_HIGHUSER_MOVABLE);
	start = page_to_pfn(block);
	for (i = 0; i < nr_folios; i++)
		__free_page(block + i);
	ret = kernel_write(file, data, nr_folios * PAGE_SIZE, &pos);
	for (i = nr_folios; i < pageblock_nr_pages; i++)
		__free_page(block + i);
	KUNIT_ASSERT_EQ(test, ret, nr_folios * PAGE_SIZE);

	for (i = 0; i < nr_folios; i++) {
		folio = filemap_lock_folio(file->f_mapping, i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
		folio_set_rcu_free(folio);
		in_block += folio_pfn(folio) - start < pageblock_nr_pages;
		folio_unlock(folio);
		folio_put(folio);
	}
	if (!in_block)
		kunit_skip(test, "no folio of the file in the freed pageblock");
	lru_add_drain_all();

	ev0 = vm_event(test, "pgfree_rcu_drain");
	hold_normal_free(test);
	ret = alloc_contig_range(start, start + pageblock_nr_pages,
				 ACR_FLAGS_NONE, GFP_KERNEL | __GFP_NOWARN);
	if (!ret)
		free_contig_range(start, pageblock_nr_pages);
	pos = 0;
	KUNIT_ASSERT_EQ(test, kernel_read(file, back, nr_folios * PAGE_SIZE,
					  &pos), nr_folios * PAGE_SIZE);

	KUNIT_EXPECT_EQ_MSG(test, ret, 0,
			    "%u folios migrated, their old copies left waiting",
			    in_block);
	KUNIT_EXPECT_GE(test, vm_event(test, "pgfree_rcu_drain") - ev0, 1);
	KUNIT_EXPECT_EQ(test, memcmp(data, back, nr_folios * PAGE_SIZE), 0);
#else
	kunit_skip(test, "needs CONTIG_ALLOC");
#endif
}

#ifdef CONFIG_COMPACTION
/*
 * The compaction cases run the real compact_zone() loop on a ZONE_DMA the
 * case owns page by page, entered as the kernel enters it: direct
 * compaction from a high-order allocation (sync-light, or async for a
 * costly order), and /proc/sys/vm/compact_memory (sync, order -1).
 *
 *   src: a movable pageblock whose first 8 or 16 pages hold the folios of
 *        a ramfs file, the only pages of the zone on an LRU;
 *   dst: a movable pageblock above it whose even pages are free, order-0
 *        each, the only free pages of the zone: the migration targets;
 *   everything else is held by the case.
 *
 * So no free block of order 3 or more exists until the file's pages are
 * free again, and compaction can only migrate the file's folios from src
 * into dst.  The allocations leave kswapd (and the kcompactd it wakes)
 * alone: nothing else compacts the zone meanwhile.
 */

/* Migrations of the case's file: the modes tried and the modes that moved */
static struct {
	bool refuse_async;
	unsigned long tried, moved;	/* BIT(enum migrate_mode) */
	int nr_moved;
} migrations;

/*
 * The case's file is a ramfs inode whose page cache the case fills with
 * pages of its own; its ->migrate_folio() is migrate_folio(), which tmpfs
 * uses too, and sees the mode of every migration.  Sync modes try
 * MIGRATE_ASYNC first (migrate_pages_sync()); refusing it makes a folio
 * move in the mode compaction runs in.
 */
static int record_migrate_folio(struct address_space *mapping,
				struct folio *dst, struct folio *src,
				enum migrate_mode mode)
{
	int ret;

	migrations.tried |= BIT(mode);
	if (migrations.refuse_async && mode == MIGRATE_ASYNC)
		return -EAGAIN;
	ret = migrate_folio(mapping, dst, src, mode);
	if (!ret) {
		migrations.moved |= BIT(mode);
		migrations.nr_moved++;
	}
	return ret;
}

static const struct address_space_operations record_aops = {
	.dirty_folio	= noop_dirty_folio,
	.migrate_folio	= record_migrate_folio,
};

/* Movable ZONE_DMA pages, without waking kswapd */
#define DMA_MOVABLE	((GFP_USER & ~__GFP_KSWAPD_RECLAIM) | __GFP_DMA | \
			 __GFP_MOVABLE)

#define COMPACT_MAX_FOLIOS	16
/* Pages the unrelated and nothing-waiting cases leave waiting */
#define NR_UNRELATED		16

struct dma_layout {
	struct page **pages;	/* [0, 2 * pageblock_nr_pages): src, dst */
	int nr;			/* entries of @pages; NULL once given back */
	struct zone *zone;
	unsigned long src, dst;	/* first pfns of the two pageblocks */
	struct file *file;
	unsigned int nr_folios;
	struct folio *pinned[COMPACT_MAX_FOLIOS];
};

static void dma_layout_release(void *data)
{
	struct dma_layout *l = data;
	int i;

	/* Unflagged: their free must not wait after the case is over */
	for (i = 0; i < ARRAY_SIZE(l->pinned); i++) {
		if (!l->pinned[i])
			continue;
		folio_clear_rcu_free(l->pinned[i]);
		folio_put(l->pinned[i]);
	}
	for (i = 0; i < l->nr; i++)
		if (l->pages[i])
			__free_page(l->pages[i]);
}

/* The page at @pfn of the dst block, given back to the allocator */
static void dma_layout_free(struct dma_layout *l, unsigned long pfn)
{
	int i = pageblock_nr_pages + pfn - l->dst;

	__free_page(l->pages[i]);
	l->pages[i] = NULL;
}

/* The byte every byte of the file's page @index holds */
static u8 file_byte(unsigned int index)
{
	return 0x40 + index;
}

static int cmp_page_pfn(const void *a, const void *b)
{
	unsigned long pa = page_to_pfn(*(struct page * const *)a);
	unsigned long pb = page_to_pfn(*(struct page * const *)b);

	return pa < pb ? -1 : pa > pb;
}

/*
 * Compaction as after boot: earlier cases left skip hints, cached scanner
 * positions and deferrals for @order on the zone, and the fill may have
 * boosted its watermarks.
 */
static void compaction_start_afresh(struct zone *zone, int order)
{
	unsigned long pfn, start = zone->zone_start_pfn;
	unsigned long last = pageblock_start_pfn(zone_end_pfn(zone) - 1);

	for (pfn = pageblock_start_pfn(start); pfn <= last;
	     pfn += pageblock_nr_pages)
		clear_pageblock_skip(pfn_to_page(max(pfn, start)));
	zone->compact_init_migrate_pfn = start;
	zone->compact_cached_migrate_pfn[0] = start;
	zone->compact_cached_migrate_pfn[1] = start;
	zone->compact_init_free_pfn = last;
	zone->compact_cached_free_pfn = last;
	compaction_defer_reset(zone, order, true);
	zone_drop_boost(zone);
}

/*
 * Lay ZONE_DMA out as above with the file's first @nr_folios pages the
 * first pages of src, flagged if @flagged, each with an extra reference
 * if @pinned.  Frees go to the held lists from here on.
 */
static struct dma_layout *dma_layout_setup(struct kunit *test,
					   unsigned int nr_folios,
					   bool flagged, bool pinned)
{
	const unsigned long nr_block = pageblock_nr_pages;
	/* ZONE_DMA is 16 MiB, a pageblock at least 2 MiB */
	struct page *blocks[8];
	int ret, j, nr_blocks = 0;
	struct dma_layout *l;
	struct page *a, *b;
	struct folio *folio;
	unsigned long i;

	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	l->pages = dma_pages(test);
	l->nr_folios = nr_folios;
	memset(&migrations, 0, sizeof(migrations));
	l->file = case_file(test, mm_test_mount(test, "ramfs", NULL),
			    "compacted");
	l->file->f_mapping->a_ops = &record_aops;
	ret = kunit_add_action_or_reset(test, dma_layout_release, l);
	KUNIT_ASSERT_EQ(test, ret, 0);

	/*
	 * Every free pageblock: the lowest is src, the highest dst.  Sync
	 * compaction isolates all of src before it migrates, and its free
	 * scanner stops at the end of the pageblock after it: at least one
	 * pageblock must lie between the two.
	 */
	drain_all_pages(NULL);
	while (nr_blocks < ARRAY_SIZE(blocks)) {
		blocks[nr_blocks] = alloc_pages(DMA_MOVABLE | __GFP_NORETRY |
						__GFP_NOWARN, pageblock_order);
		if (!blocks[nr_blocks])
			break;
		split_page(blocks[nr_blocks++], pageblock_order);
	}
	sort(blocks, nr_blocks, sizeof(*blocks), cmp_page_pfn, NULL);
	/* src, dst, then the other blocks, held */
	if (nr_blocks > 1)
		swap(blocks[1], blocks[nr_blocks - 1]);
	for (j = 0; j < nr_blocks; j++)
		for (i = 0; i < nr_block; i++)
			l->pages[l->nr++] = blocks[j] + i;
	if (nr_blocks < 2 ||
	    page_to_pfn(blocks[1]) - page_to_pfn(blocks[0]) < 2 * nr_block)
		kunit_skip(test, "no two free pageblocks in ZONE_DMA with one between (%d free)",
			   nr_blocks);
	a = blocks[0];
	b = blocks[1];
	l->src = page_to_pfn(a);
	l->dst = page_to_pfn(b);
	l->zone = page_zone(a);
	KUNIT_ASSERT_EQ(test, (int)zone_idx(l->zone), (int)ZONE_DMA);
	KUNIT_ASSERT_EQ_MSG(test, get_pageblock_migratetype(a), MIGRATE_MOVABLE,
			    "src pageblock %#lx", l->src);
	KUNIT_ASSERT_EQ_MSG(test, get_pageblock_migratetype(b), MIGRATE_MOVABLE,
			    "dst pageblock %#lx", l->dst);
	l->nr = fill_zone_dma(l->pages, l->nr, false);
	l->nr = fill_zone_dma(l->pages, l->nr, true);
	KUNIT_ASSERT_GT(test, l->nr, (int)(2 * nr_block + NR_UNRELATED));

	hold_normal_free(test);
	for (i = 0; i < nr_folios; i++) {
		folio = page_folio(l->pages[i]);
		l->pages[i] = NULL;
		memset(folio_address(folio), file_byte(i), PAGE_SIZE);
		ret = filemap_add_folio(l->file->f_mapping, folio, i,
					GFP_KERNEL);
		if (ret) {
			folio_put(folio);
			KUNIT_FAIL_AND_ABORT(test, "filemap_add_folio: %d", ret);
		}
		folio_mark_uptodate(folio);
		if (flagged)
			folio_set_rcu_free(folio);
		folio_unlock(folio);
		if (pinned)
			l->pinned[i] = folio;
		else
			folio_put(folio);
	}
	lru_add_drain_all();

	for (i = 0; i < nr_block; i += 2)
		dma_layout_free(l, l->dst + i);
	drain_all_pages(l->zone);
	kunit_info(test, "ZONE_DMA: src %#lx, dst %#lx, %lu free, min %lu",
		   l->src, l->dst, zone_page_state(l->zone, NR_FREE_PAGES),
		   min_wmark_pages(l->zone));
	return l;
}

/*
 * How many of the file's folios left the src pageblock with their data;
 * a folio that holds other bytes counts as not moved.
 */
static unsigned int dma_layout_moved(struct kunit *test, struct dma_layout *l)
{
	unsigned int i, moved = 0;
	struct folio *folio;

	for (i = 0; i < l->nr_folios; i++) {
		folio = filemap_get_folio(l->file->f_mapping, i);
		if (IS_ERR(folio))
			continue;
		if (memchr_inv(folio_address(folio), file_byte(i), PAGE_SIZE))
			KUNIT_FAIL(test, "page %u of the file changed", i);
		else
			moved += folio_pfn(folio) - l->src >= pageblock_nr_pages;
		folio_put(folio);
	}
	return moved;
}

/* How many of the file's old pages, from @l->src on, still wait */
static unsigned int dma_layout_old_waiting(struct dma_layout *l)
{
	unsigned int i, waiting = 0;

	for (i = 0; i < l->nr_folios; i++)
		waiting += folio_test_rcu_free(pfn_folio(l->src + i)) &&
			   !page_count(pfn_to_page(l->src + i));
	return waiting;
}

/* ZONE_DMA's waiting pages */
static long dma_waiting(struct kunit *test, struct dma_layout *l)
{
	return zone_page_state_snapshot(l->zone,
					zone_stat_item(test, "nr_free_rcu"));
}

/* Flagged pages of their own left waiting next to the compaction run */
static struct page **queue_unrelated(struct kunit *test, struct dma_layout *l,
				     int nr, bool in_dma)
{
	struct page **pages = kunit_kcalloc(test, nr, sizeof(*pages),
					    GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, pages);
	for (i = 0; i < nr; i++) {
		if (in_dma) {
			/* Held pages of the fill, past the two pageblocks */
			pages[i] = l->pages[l->nr - 1 - i];
			l->pages[l->nr - 1 - i] = NULL;
		} else {
			pages[i] = alloc_page(GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		}
		put_flagged(pages[i]);
		if (!in_dma)
			KUNIT_ASSERT_NE(test, (int)page_zonenum(pages[i]),
					(int)ZONE_DMA);
	}
	return pages;
}

static int still_waiting(struct page **pages, int nr)
{
	int i, waiting = 0;

	for (i = 0; i < nr; i++)
		waiting += folio_test_rcu_free(page_folio(pages[i]));
	return waiting;
}

/*
 * Direct compaction of ZONE_DMA from an allocation of @order with
 * __GFP_NORETRY: order 3 (not costly, movable) reclaims, then compacts
 * once at DEF_COMPACT_PRIORITY, which is MIGRATE_SYNC_LIGHT; order 4
 * (costly) compacts at INIT_COMPACT_PRIORITY, MIGRATE_ASYNC, before and
 * after its reclaim.  No retry, so no drain before OOM.
 */

static struct page *alloc_compacting(struct dma_layout *l, unsigned int order)
{
	compaction_start_afresh(l->zone, order);
	return alloc_pages(DMA_MOVABLE | __GFP_NORETRY | __GFP_NOWARN, order);
}
#endif /* CONFIG_COMPACTION */

/*
 * Sync-light direct compaction (an order-3 allocation) migrates 8 flagged
 * folios out of the only block that can become free: when the migration
 * scanner leaves it, compaction frees their old copies (one drain), the
 * block is free and the allocation gets it.  Normal frees are held, so
 * nothing else could have freed them; the old copies are back in the
 * allocator, and the exit checks that their grace period had ended.
 */
static void rcu_free_compaction_sync_light_frees(struct kunit *test)
{
#ifdef CONFIG_COMPACTION
	/* Counters first: a missing one must not leave the zone filled */
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	unsigned long stall0 = vm_event(test, "compact_stall");
	struct dma_layout *l = dma_layout_setup(test, 8, true, false);
	long waiting0 = dma_waiting(test, l);
	struct page *page;
	unsigned long pfn;

	migrations.refuse_async = true;
	page = alloc_compacting(l, 3);
	pfn = page ? page_to_pfn(page) : 0;
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_EQ_MSG(test, migrations.moved, BIT(MIGRATE_SYNC_LIGHT),
			    "modes that moved a folio (tried %#lx)",
			    migrations.tried);
	KUNIT_EXPECT_EQ(test, migrations.nr_moved, 8);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 8);
	KUNIT_EXPECT_GE(test, vm_event(test, "compact_stall") - stall0, 1);
	KUNIT_EXPECT_EQ_MSG(test, pfn, l->src,
			    "the allocation did not get the emptied block");
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 1);
	KUNIT_EXPECT_EQ_MSG(test, dma_waiting(test, l), waiting0,
			    "old copies still waiting");
	KUNIT_EXPECT_EQ(test, dma_layout_old_waiting(l), 0);
#else
	kunit_skip(test, "needs COMPACTION");
#endif
}

/*
 * Async direct compaction (a costly order-4 allocation) migrates 16
 * flagged folios but does not wait for a grace period: their old copies
 * still wait, no drain, and the allocation fails.  No sync-light round
 * ran: it would have failed and deferred compaction at order 4.
 */
static void rcu_free_compaction_async_leaves(struct kunit *test)
{
#ifdef CONFIG_COMPACTION
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	unsigned long stall0 = vm_event(test, "compact_stall");
	struct dma_layout *l = dma_layout_setup(test, 16, true, false);
	long waiting0 = dma_waiting(test, l);
	struct page *page;
	int failed;

	page = alloc_compacting(l, 4);
	failed = l->zone->compact_order_failed;
	if (page)
		__free_pages(page, 4);

	KUNIT_EXPECT_EQ_MSG(test, migrations.tried, BIT(MIGRATE_ASYNC),
			    "modes tried");
	KUNIT_EXPECT_EQ(test, migrations.nr_moved, 16);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 16);
	KUNIT_EXPECT_GE(test, vm_event(test, "compact_stall") - stall0, 1);
	KUNIT_EXPECT_GT_MSG(test, failed, 4, "a sync round deferred order 4");
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	KUNIT_EXPECT_EQ(test, dma_waiting(test, l) - waiting0, 16);
	KUNIT_EXPECT_EQ(test, dma_layout_old_waiting(l), 16);
#else
	kunit_skip(test, "needs COMPACTION");
#endif
}

/*
 * Sync-light direct compaction that migrates only unflagged folios,
 * while other pages of the zone wait (held): no rcu_free_sync(), so they
 * still wait and nothing was drained (before fix D: an expedited grace
 * period each time the scanner left a block).
 */
static void rcu_free_compaction_unrelated_left(struct kunit *test)
{
#ifdef CONFIG_COMPACTION
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	struct dma_layout *l = dma_layout_setup(test, 8, false, false);
	struct page **unrelated, *page;
	long waiting;

	unrelated = queue_unrelated(test, l, NR_UNRELATED, true);
	waiting = dma_waiting(test, l);
	migrations.refuse_async = true;
	page = alloc_compacting(l, 3);
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_EQ_MSG(test, migrations.moved, BIT(MIGRATE_SYNC_LIGHT),
			    "modes that moved a folio (tried %#lx)",
			    migrations.tried);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 8);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	KUNIT_EXPECT_EQ(test, still_waiting(unrelated, NR_UNRELATED),
			NR_UNRELATED);
	KUNIT_EXPECT_EQ(test, dma_waiting(test, l), waiting);
#else
	kunit_skip(test, "needs COMPACTION");
#endif
}

/*
 * Sync-light direct compaction isolates 8 flagged folios whose migration
 * fails (each has an extra reference): nothing of ZONE_DMA waits, so no
 * rcu_free_sync() when the scanner leaves the block.  rcu_free_sync()
 * drains every zone: pages waiting in another zone (held) would show a
 * call; they still wait, and nothing was drained.
 */
static void rcu_free_compaction_nothing_waiting(struct kunit *test)
{
#ifdef CONFIG_COMPACTION
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	struct dma_layout *l = dma_layout_setup(test, 8, true, true);
	struct page **elsewhere, *page;

	elsewhere = queue_unrelated(test, l, NR_UNRELATED, false);
	migrations.refuse_async = true;
	page = alloc_compacting(l, 3);
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_TRUE_MSG(test, migrations.tried & BIT(MIGRATE_SYNC_LIGHT),
			      "modes tried %#lx", migrations.tried);
	KUNIT_EXPECT_EQ(test, migrations.nr_moved, 0);
	KUNIT_EXPECT_EQ(test, dma_waiting(test, l), 0);
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	KUNIT_EXPECT_EQ(test, still_waiting(elsewhere, NR_UNRELATED),
			NR_UNRELATED);
#else
	kunit_skip(test, "needs COMPACTION");
#endif
}

/*
 * /proc/sys/vm/compact_memory (MIGRATE_SYNC, order -1) migrates 8 flagged
 * folios.  A full compaction has no allocation to hurry and does not free
 * the waiting pages (compact_zone() only looks for order > 0): the old
 * copies still wait afterwards, nothing was drained, and the series' own
 * grace-period work then gives them back.
 */
static void rcu_free_compaction_full_waits(struct kunit *test)
{
#ifdef CONFIG_COMPACTION
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	struct vfsmount *proc = mm_test_mount(test, "proc", NULL);
	struct dma_layout *l = dma_layout_setup(test, 8, true, false);
	long waiting0 = dma_waiting(test, l);
	long waiting_after, waiting_later;
	unsigned int old_waiting;
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;

	file = file_open_root_mnt(proc, "sys/vm/compact_memory", O_WRONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "open compact_memory: %ld",
			       PTR_ERR(file));
	migrations.refuse_async = true;
	ret = kernel_write(file, "1", 1, &pos);
	fput(file);
	waiting_after = dma_waiting(test, l);
	old_waiting = dma_layout_old_waiting(l);

	/* Give the held pages their grace period */
	kunit_release_action(test, hold_release, NULL);
	rcu_free_wait_grace();
	waiting_later = dma_waiting(test, l);

	KUNIT_EXPECT_EQ(test, ret, 1);
	KUNIT_EXPECT_EQ_MSG(test, migrations.moved, BIT(MIGRATE_SYNC),
			    "modes that moved a folio (tried %#lx)",
			    migrations.tried);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 8);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	KUNIT_EXPECT_EQ(test, waiting_after - waiting0, 8);
	KUNIT_EXPECT_EQ(test, old_waiting, 8);
	KUNIT_EXPECT_EQ_MSG(test, waiting_later, waiting0,
			    "not back after their grace period");
	KUNIT_EXPECT_EQ(test, dma_layout_old_waiting(l), 0);
#else
	kunit_skip(test, "needs COMPACTION");
#endif
}

/*
 * rcu_free_sync() puts what it drains on the buddy lists, where the next
 * watermark check sees it, not on a per-CPU list.  ZONE_DMA, which nothing
 * else allocates from here, keeps the pages where the drain put them.
 */
static void rcu_free_drain_frees_to_buddy(struct kunit *test)
{
#if IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_SYNC)
	const int nr = 64;
	struct page **pages = dma_pages(test);
	int i, in_buddy = 0;

	alloc_all(test, pages, nr, GFP_KERNEL | GFP_DMA | __GFP_NOWARN,
		  GFP_KERNEL | GFP_DMA | __GFP_NOWARN);
	hold_normal_free(test);
	for (i = 0; i < nr; i++)
		put_flagged(pages[i]);
	rcu_free_sync();
	for (i = 0; i < nr; i++)
		in_buddy += is_free_buddy_page(pages[i]);

	KUNIT_EXPECT_EQ_MSG(test, in_buddy, nr,
			    "drained pages not on the buddy lists");
#else
	KUNIT_FAIL(test, "no rcu_free_sync() to test: patch 7 is not applied");
#endif
}

/*
 * memory_failure() (or soft offline, @soft) of a page waiting for a grace
 * period: it ends poisoned and out of the allocator; unpoisoned after.
 */
static void rcu_free_poison(struct kunit *test, bool soft)
{
#ifdef CONFIG_MEMORY_FAILURE
	struct page *page;
	bool poisoned, buddy;
	unsigned long pfn;
	int ret, count;

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	pfn = page_to_pfn(page);

	hold_normal_free(test);
	put_flagged(page);
	ret = soft ? soft_offline_page(pfn, 0) :
		     memory_failure(pfn, MF_SW_SIMULATED);
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	if (poisoned)
		KUNIT_EXPECT_EQ(test, unpoison_memory(pfn), 0);

	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
#else
	kunit_skip(test, "needs MEMORY_FAILURE");
#endif
}

/* memory_failure() of a waiting page poisons it and takes it */
static void rcu_free_memory_failure(struct kunit *test)
{
	rcu_free_poison(test, false);
}

/* Soft offline of a waiting page poisons it and takes it */
static void rcu_free_soft_offline(struct kunit *test)
{
	rcu_free_poison(test, true);
}

struct mf_call {
	unsigned long pfn;
	int ret;
	struct completion done;
};

static int mf_call_fn(void *data)
{
	struct mf_call *call = data;

	call->ret = memory_failure(call->pfn, MF_SW_SIMULATED);
	complete(&call->done);
	return 0;
}

static void unpoison_pfn(void *data)
{
	unsigned long *pfn = data;

	if (*pfn && PageHWPoison(pfn_to_page(*pfn)))
		unpoison_memory(*pfn);
}

/*
 * memory_failure() of a hot tmpfs folio in use: a reader that found it
 * before PG_hwpoison was set may still be copying from it without a
 * reference, so memory_failure() must not return (and let its caller act
 * on the page) while such a reader's section lasts.  The reader is this
 * thread, spinning in rcu_read_lock() on its CPU while memory_failure()
 * runs on another; it watches for 200 ms after PG_hwpoison is set.  The
 * correct code cannot return in that window whatever the timing; code
 * that does not wait returns well within it.
 */
static void rcu_free_memory_failure_waits_for_readers(struct kunit *test)
{
#ifdef CONFIG_MEMORY_FAILURE
	struct mf_call *call;
	unsigned long *poisoned, deadline;
	bool seen_poison, returned;
	struct task_struct *task;
	struct folio *folio;
	struct vfsmount *mnt;
	struct file *file;
	loff_t pos = 0;
	int cpu;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 CPUs: the reader spins while memory_failure() runs");
	call = kunit_kzalloc(test, sizeof(*call), GFP_KERNEL);
	poisoned = kunit_kzalloc(test, sizeof(*poisoned), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, call);
	KUNIT_ASSERT_NOT_NULL(test, poisoned);
	/* Runs after the file is gone, which frees the poisoned page */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unpoison_pfn,
							poisoned), 0);
	mnt = mm_test_mount(test, "tmpfs", "never");
	file = case_file(test, mnt, "poisoned");
	KUNIT_ASSERT_EQ(test, kernel_write(file, "data", 4, &pos), 4);
	folio = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	folio_set_rcu_free(folio);
	call->pfn = folio_pfn(folio);
	folio_unlock(folio);
	folio_put(folio);
	lru_add_drain_all();
	init_completion(&call->done);

	migrate_disable();
	cpu = cpumask_any_but(cpu_online_mask, smp_processor_id());
	task = kthread_create(mf_call_fn, call, "rcu_free_mf");
	if (IS_ERR(task)) {
		migrate_enable();
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	kthread_bind(task, cpu);
	*poisoned = call->pfn;

	rcu_read_lock();
	wake_up_process(task);
	deadline = jiffies + 10 * HZ;
	while (!(seen_poison = PageHWPoison(pfn_to_page(call->pfn))) &&
	       !completion_done(&call->done) && time_before(jiffies, deadline))
		cpu_relax();
	deadline = jiffies + msecs_to_jiffies(200);
	while (!(returned = completion_done(&call->done)) &&
	       time_before(jiffies, deadline))
		cpu_relax();
	rcu_read_unlock();
	migrate_enable();
	wait_for_completion(&call->done);

	KUNIT_EXPECT_TRUE_MSG(test, seen_poison, "PG_hwpoison never set");
	KUNIT_EXPECT_EQ(test, call->ret, 0);
	KUNIT_EXPECT_FALSE_MSG(test, returned,
			       "memory_failure() returned inside a reader's section");
#else
	kunit_skip(test, "needs MEMORY_FAILURE");
#endif
}

/*
 * Soft offline of a hot, clean page cache folio drops its last reference
 * and takes a hwpoison reference at once: the folio must not be queued in
 * between, and the free after an unpoison waits for one grace period (a
 * folio still queued would be added to a list a second time).
 */
static void rcu_free_soft_offline_cached_then_unpoison(struct kunit *test)
{
#ifdef CONFIG_MEMORY_FAILURE
	unsigned long queued0, queued_poisoned, queued_unpoisoned, pfn;
	int ret, unpoisoned = -1, count;
	unsigned long *left_poisoned;
	struct folio *folio;
	bool poisoned;

	left_poisoned = kunit_kzalloc(test, sizeof(*left_poisoned), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, left_poisoned);
	cached_flagged_folio(test, "offlined", &folio);
	pfn = folio_pfn(folio);
	/*
	 * A folio poisoned while queued is not unpoisoned below: the action
	 * does it once the exit has let it through its grace period.
	 */
	*left_poisoned = pfn;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unpoison_pfn,
							left_poisoned), 0);
	queued0 = rcu_free_nr_queued();

	hold_normal_free(test);
	ret = soft_offline_page(pfn, 0);
	poisoned = PageHWPoison(&folio->page);
	queued_poisoned = rcu_free_nr_queued();
	count = page_count(&folio->page);
	/* An unpoison of a queued folio would corrupt the list: not then */
	if (poisoned && queued_poisoned == queued0)
		unpoisoned = unpoison_memory(pfn);
	queued_unpoisoned = rcu_free_nr_queued();

	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_TRUE(test, poisoned);
	KUNIT_EXPECT_EQ_MSG(test, queued_poisoned, queued0,
			    "queued with the hwpoison reference taken");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ(test, unpoisoned, 0);
	KUNIT_EXPECT_EQ_MSG(test, queued_unpoisoned, queued0 + 1,
			    "the free after the unpoison did not wait once");
#else
	kunit_skip(test, "needs MEMORY_FAILURE");
#endif
}

/* Splitting a flagged PMD-size tmpfs folio flags every new folio */
static void rcu_free_split_inherits_flag(struct kunit *test)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	struct vfsmount *mnt = mm_test_mount(test, "tmpfs", "always");
	const pgoff_t nr = HPAGE_PMD_NR;
	struct folio *folio;
	struct file *file;
	pgoff_t index, flagged = 0;
	unsigned int order;
	loff_t pos = 0;
	ssize_t ret;
	void *data;
	int split;

	file = case_file(test, mnt, "split");
	data = kunit_kzalloc(test, HPAGE_PMD_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memset(data, 0x3c, HPAGE_PMD_SIZE);
	ret = kernel_write(file, data, HPAGE_PMD_SIZE, &pos);
	KUNIT_ASSERT_EQ(test, ret, HPAGE_PMD_SIZE);
	lru_add_drain_all();

	folio = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	order = folio_order(folio);
	if (order != HPAGE_PMD_ORDER) {
		folio_unlock(folio);
		folio_put(folio);
		kunit_skip(test, "no PMD-size folio (order %u): memory too fragmented?",
			   order);
	}
	folio_set_rcu_free(folio);
	split = split_folio(folio);
	folio_unlock(folio);
	folio_put(folio);

	for (index = 0; !split && index < nr; index++) {
		folio = filemap_get_folio(file->f_mapping, index);
		if (IS_ERR(folio))
			continue;
		flagged += folio_test_rcu_free(folio) && !folio_test_large(folio);
		folio_put(folio);
	}

	KUNIT_ASSERT_EQ_MSG(test, split, 0, "the split failed");
	KUNIT_EXPECT_EQ_MSG(test, flagged, nr,
			    "order-0 folios flagged after the split");
#else
	kunit_skip(test, "needs TRANSPARENT_HUGEPAGE");
#endif
}

/*
 * SPLICE_F_MOVE from the page cache: the receiving end cannot steal the
 * folio from its file, so it copies; the folio stays in the page cache.
 */
static void rcu_free_splice_move_copies(struct kunit *test)
{
	struct vfsmount *mnt = mm_test_mount(test, "ramfs", NULL);
	struct pipe_inode_info *pipe;
	struct folio *spliced, *cached;
	struct pipe_buffer *buf;
	struct file *file, *pipes[2];
	loff_t pos = 0;
	ssize_t ret;
	bool stolen;
	void *data;

	file = file_open_root_mnt(mnt, "spliced", O_CREAT | O_RDWR, 0600);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput, file), 0);
	data = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memset(data, 0x5a, PAGE_SIZE);
	ret = kernel_write(file, data, PAGE_SIZE, &pos);
	KUNIT_ASSERT_EQ(test, ret, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, create_pipe_files(pipes, 0), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput,
							pipes[0]), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput,
							pipes[1]), 0);
	pipe = get_pipe_info(pipes[1], false);

	/*
	 * Make the folio one that stealing used to take: clean, as after
	 * writeback (ramfs keeps its folios dirty, and a dirty folio cannot
	 * leave the cache), and without the extra reference of a per-CPU
	 * LRU batch.
	 */
	cached = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cached));
	folio_clear_dirty_for_io(cached);
	folio_unlock(cached);
	folio_put(cached);
	lru_add_drain_all();

	pos = 0;
	pipe_lock(pipe);
	ret = vfs_splice_read(file, &pos, pipe, PAGE_SIZE, SPLICE_F_MOVE);
	stolen = false;
	spliced = NULL;
	if (ret == PAGE_SIZE) {
		buf = pipe_buf(pipe, pipe->tail);
		spliced = page_folio(buf->page);
		if (!pipe_buf_confirm(pipe, buf))
			stolen = pipe_buf_try_steal(pipe, buf);
		if (stolen)
			folio_unlock(spliced);
	}
	pipe_unlock(pipe);
	cached = filemap_get_folio(file->f_mapping, 0);

	KUNIT_EXPECT_EQ(test, ret, PAGE_SIZE);
	KUNIT_EXPECT_FALSE_MSG(test, stolen, "a page cache folio was stolen");
	KUNIT_EXPECT_PTR_EQ(test, cached, spliced);
	if (!IS_ERR(cached))
		folio_put(cached);
}

static struct kunit_case rcu_free_test_cases[] = {
	KUNIT_CASE(rcu_free_grace_period_check_present),
	KUNIT_CASE_PARAM(rcu_free_flagged_waits_for_grace_period,
			 folio_order_gen_params),
	KUNIT_CASE(rcu_free_unflagged_freed_at_once),
	KUNIT_CASE(rcu_free_freed_in_flight_waits_for_next),
	KUNIT_CASE(rcu_free_reader_sees_old_contents),
	KUNIT_CASE(rcu_free_expedite_when_short),
	KUNIT_CASE(rcu_free_no_expedite_when_plentiful),
	DRAIN_DECISION_CASE,
	KUNIT_CASE(rcu_free_drain_before_oom),
	KUNIT_CASE(rcu_free_drain_that_cannot_help_ends),
	DRAIN_STREAK_CASE,
	KUNIT_CASE_PARAM(rcu_free_alloc_contig_range, contig_gen_params),
	KUNIT_CASE(rcu_free_alloc_contig_migrated),
	KUNIT_CASE(rcu_free_compaction_sync_light_frees),
	KUNIT_CASE(rcu_free_compaction_async_leaves),
	KUNIT_CASE(rcu_free_compaction_unrelated_left),
	KUNIT_CASE(rcu_free_compaction_nothing_waiting),
	KUNIT_CASE(rcu_free_compaction_full_waits),
	KUNIT_CASE(rcu_free_drain_frees_to_buddy),
	KUNIT_CASE(rcu_free_memory_failure),
	KUNIT_CASE(rcu_free_memory_failure_waits_for_readers),
	KUNIT_CASE(rcu_free_soft_offline),
	KUNIT_CASE(rcu_free_soft_offline_cached_then_unpoison),
	KUNIT_CASE(rcu_free_split_inherits_flag),
	KUNIT_CASE(rcu_free_splice_move_copies),
	{}
};

#else /* !CONFIG_DEBUG_PAGE_RCU_FREE */

static int rcu_free_test_init(struct kunit *test)
{
	kunit_skip(test, IS_ENABLED(CONFIG_PAGE_RCU_FREE) ?
		   "needs CONFIG_DEBUG_PAGE_RCU_FREE: the hold and wait helpers" :
		   "CONFIG_PAGE_RCU_FREE is off or rcu-free is not applied");
	return 0;
}

static void rcu_free_test_exit(struct kunit *test)
{
}

/*
 * The same case names, so that a run without the series lists each one
 * skipped (by the init above).
 */
#define RCU_FREE_NOT_BUILT(case_name) \
	static void case_name(struct kunit *test) { }

RCU_FREE_NOT_BUILT(rcu_free_grace_period_check_present)
RCU_FREE_NOT_BUILT(rcu_free_flagged_waits_for_grace_period)
RCU_FREE_NOT_BUILT(rcu_free_unflagged_freed_at_once)
RCU_FREE_NOT_BUILT(rcu_free_freed_in_flight_waits_for_next)
RCU_FREE_NOT_BUILT(rcu_free_reader_sees_old_contents)
RCU_FREE_NOT_BUILT(rcu_free_expedite_when_short)
RCU_FREE_NOT_BUILT(rcu_free_no_expedite_when_plentiful)
RCU_FREE_NOT_BUILT(rcu_free_drain_decision)
RCU_FREE_NOT_BUILT(rcu_free_drain_before_oom)
RCU_FREE_NOT_BUILT(rcu_free_drain_that_cannot_help_ends)
RCU_FREE_NOT_BUILT(rcu_free_drain_streak)
RCU_FREE_NOT_BUILT(rcu_free_alloc_contig_range)
RCU_FREE_NOT_BUILT(rcu_free_alloc_contig_migrated)
RCU_FREE_NOT_BUILT(rcu_free_compaction_sync_light_frees)
RCU_FREE_NOT_BUILT(rcu_free_compaction_async_leaves)
RCU_FREE_NOT_BUILT(rcu_free_compaction_unrelated_left)
RCU_FREE_NOT_BUILT(rcu_free_compaction_nothing_waiting)
RCU_FREE_NOT_BUILT(rcu_free_compaction_full_waits)
RCU_FREE_NOT_BUILT(rcu_free_drain_frees_to_buddy)
RCU_FREE_NOT_BUILT(rcu_free_memory_failure)
RCU_FREE_NOT_BUILT(rcu_free_memory_failure_waits_for_readers)
RCU_FREE_NOT_BUILT(rcu_free_soft_offline)
RCU_FREE_NOT_BUILT(rcu_free_soft_offline_cached_then_unpoison)
RCU_FREE_NOT_BUILT(rcu_free_split_inherits_flag)
RCU_FREE_NOT_BUILT(rcu_free_splice_move_copies)

static struct kunit_case rcu_free_test_cases[] = {
	KUNIT_CASE(rcu_free_grace_period_check_present),
	KUNIT_CASE(rcu_free_flagged_waits_for_grace_period),
	KUNIT_CASE(rcu_free_unflagged_freed_at_once),
	KUNIT_CASE(rcu_free_freed_in_flight_waits_for_next),
	KUNIT_CASE(rcu_free_reader_sees_old_contents),
	KUNIT_CASE(rcu_free_expedite_when_short),
	KUNIT_CASE(rcu_free_no_expedite_when_plentiful),
	KUNIT_CASE(rcu_free_drain_decision),
	KUNIT_CASE(rcu_free_drain_before_oom),
	KUNIT_CASE(rcu_free_drain_that_cannot_help_ends),
	KUNIT_CASE(rcu_free_drain_streak),
	KUNIT_CASE(rcu_free_alloc_contig_range),
	KUNIT_CASE(rcu_free_alloc_contig_migrated),
	KUNIT_CASE(rcu_free_compaction_sync_light_frees),
	KUNIT_CASE(rcu_free_compaction_async_leaves),
	KUNIT_CASE(rcu_free_compaction_unrelated_left),
	KUNIT_CASE(rcu_free_compaction_nothing_waiting),
	KUNIT_CASE(rcu_free_compaction_full_waits),
	KUNIT_CASE(rcu_free_drain_frees_to_buddy),
	KUNIT_CASE(rcu_free_memory_failure),
	KUNIT_CASE(rcu_free_memory_failure_waits_for_readers),
	KUNIT_CASE(rcu_free_soft_offline),
	KUNIT_CASE(rcu_free_soft_offline_cached_then_unpoison),
	KUNIT_CASE(rcu_free_split_inherits_flag),
	KUNIT_CASE(rcu_free_splice_move_copies),
	{}
};

#endif /* CONFIG_DEBUG_PAGE_RCU_FREE */

static struct kunit_suite rcu_free_test_suite = {
	.name = "rcu_free",
	.init = rcu_free_test_init,
	.exit = rcu_free_test_exit,
	.test_cases = rcu_free_test_cases,
};

kunit_test_suite(rcu_free_test_suite);

MODULE_DESCRIPTION("KUnit tests for the deferred free of PG_rcu_free folios");
MODULE_LICENSE("GPL");
