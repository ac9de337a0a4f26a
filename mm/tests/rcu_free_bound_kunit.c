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
 * - compaction that leaves a block it migrated flagged folios from does
 *   not drain when nothing of its zone waits;
 * - compactions in a row, each of which migrated flagged folios, drain
 *   at most once per turn of the rate limit, and at least once.
 *
 * A drain is seen in pgfree_rcu_drain (the drains that freed something).
 * The compaction cases run the real compact_zone() loop on a ZONE_DMA the
 * case lays out, and hold the grace periods of the pages they leave
 * waiting back with a gate (rcu_free_gate.h), so that only a drain frees
 * them.  Where the hooks are there, the contig case also holds the
 * waiting lists (rcu_free_hold()) for its last check, and the compaction
 * cases also call the check compaction makes (compaction_free_rcu()) on
 * a compact_control of their own; without them those parts are skipped
 * by name.
 */

#include <kunit/test.h>
#include <linux/compaction.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/swap.h>

#include "rcu_free_gate.h"
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

static void require_compaction(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_COMPACTION))
		kunit_skip(test, "config: CONFIG_COMPACTION is off");
}

/*
 * The compaction cases drive the real compact_zone() loop: direct
 * compaction from an order-3 movable allocation of ZONE_DMA with
 * __GFP_NORETRY (sync-light, as any allocation of a small order enters
 * it), on a ZONE_DMA the case owns page by page (its "rig"):
 *
 *   src: a movable pageblock held by the case, whose 8-page groups it
 *        turns, one per compaction, into 7 flagged ramfs folios on an
 *        LRU; the 8th page stays held, so that no order-3 block ever
 *        comes free and each compaction runs to its end;
 *   dst: a movable pageblock above it whose even pages are free, order-0
 *        each: the migration targets;
 *   everything else is held by the case.
 *
 * So each compaction migrates the newest group's folios, and nothing
 * else, out of src, and its migration scanner then leaves the block it
 * migrated from: where the series checks whether to free what waits.
 * The allocations leave kswapd (and the kcompactd it wakes) alone.
 */

/* The order of the allocations that compact */
#define COMPACT_ORDER	3
/* Pages of a group of src, and the folios made of them */
#define GROUP_PAGES	8
#define GROUP_FOLIOS	(GROUP_PAGES - 1)
/* Flagged pages of another zone left waiting next to the compaction */
#define NR_ELSEWHERE	16

/* Compactions the nothing-waiting case tries for one that moves a group */
#define NOTHING_TRIES	4

struct dma_rig {
	struct page **pages;	/* held: src, dst, then the rest; NULL: not */
	int nr;
	struct zone *zone;
	unsigned long src, dst;	/* first pfns of the two pageblocks */
	struct file *file;
	unsigned int groups;	/* groups of src made folios */
	/* Its ->migrate_folio() drops the flag of the folios it moves */
	bool unflag;
	/* The order-3 pages its compactions got, kept until the end */
	struct page *got[COMPACT_CALLS];
	int nr_got;
};

/*
 * The rig file's ->migrate_folio(): migrate_folio(), as tmpfs; with
 * @unflag it drops the flag of the folio first, so that its old copy is
 * free at once, as if its grace period had ended before the scanner left
 * its block.
 */
static int rig_migrate_folio(struct address_space *mapping,
			     struct folio *dst, struct folio *src,
			     enum migrate_mode mode)
{
	struct dma_rig *r = mapping->host->i_private;

	/* A file whose case is over: its rig is gone */
	if (r && r->unflag)
		folio_clear_rcu_free(src);
	return migrate_folio(mapping, dst, src, mode);
}

static const struct address_space_operations rig_aops = {
	.dirty_folio	= noop_dirty_folio,
	.migrate_folio	= rig_migrate_folio,
};

static void dma_rig_release(void *data)
{
	struct dma_rig *r = data;
	int i;

	/* The file may outlive the case: its last fput can be deferred */
	r->file->f_mapping->host->i_private = NULL;
	truncate_inode_pages(r->file->f_mapping, 0);
	while (r->nr_got)
		__free_pages(r->got[--r->nr_got], COMPACT_ORDER);
	for (i = 0; i < r->nr; i++)
		if (r->pages[i])
			__free_page(r->pages[i]);
}

/*
 * Lay ZONE_DMA out as above (no group made yet) into @r: 0, or -ENOSPC
 * when it has no two free movable pageblocks with one between them (sync
 * compaction's free scanner stops a pageblock above the migration
 * scanner's), or another error.
 */
static int dma_rig_setup(struct kunit *test, struct dma_rig *r)
{
	const unsigned long nr_block = pageblock_nr_pages;
	unsigned long i;
	int ret;

	r->pages = rfk_dma_pages(test);
	r->file = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL),
				"compacted");
	r->file->f_mapping->host->i_private = r;
	r->file->f_mapping->a_ops = &rig_aops;
	ret = kunit_add_action_or_reset(test, dma_rig_release, r);
	if (ret)
		return ret;

	ret = rfk_dma_blocks(r->pages, &r->nr, &r->src, &r->dst);
	if (ret)
		return ret;
	r->zone = page_zone(pfn_to_page(r->src));
	r->nr = rfk_fill_zone_dma(r->pages, r->nr, false);
	r->nr = rfk_fill_zone_dma(r->pages, r->nr, true);
	for (i = 0; i < nr_block; i += 2) {
		__free_page(r->pages[nr_block + i]);
		r->pages[nr_block + i] = NULL;
	}
	drain_all_pages(r->zone);
	return 0;
}

/* The rig of the current case, laid out; skips when ZONE_DMA has no room */
static struct dma_rig *dma_rig_get(struct kunit *test)
{
	struct dma_rig *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, r);
	ret = dma_rig_setup(test, r);
	if (ret == -ENOSPC)
		kunit_skip(test,
			   "machine: no two free pageblocks in ZONE_DMA with one between");
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "laying ZONE_DMA out");
	return r;
}

/*
 * Make the next group of src GROUP_FOLIOS flagged folios of the rig's
 * file, on an LRU: the group's number, or an error.
 */
static int dma_rig_add_group(struct dma_rig *r)
{
	unsigned int g = r->groups, i, idx;
	struct folio *folio;
	int ret;

	if ((g + 1) * GROUP_PAGES > pageblock_nr_pages)
		return -ENOSPC;
	for (i = 0; i < GROUP_FOLIOS; i++) {
		idx = g * GROUP_PAGES + i;
		folio = page_folio(r->pages[idx]);
		r->pages[idx] = NULL;
		ret = filemap_add_folio(r->file->f_mapping, folio,
					g * GROUP_FOLIOS + i, GFP_KERNEL);
		if (ret) {
			folio_put(folio);
			return ret;
		}
		folio_mark_uptodate(folio);
		folio_set_rcu_free(folio);
		folio_unlock(folio);
		folio_put(folio);
	}
	r->groups++;
	lru_add_drain_all();
	return g;
}

/*
 * Watch the folios of group @g, whose last put is the migration's, or
 * (how many of them) count those the page cache has outside src now.
 */
static unsigned int dma_rig_group(struct kunit *test, struct dma_rig *r,
				  unsigned int g, bool watch)
{
	unsigned int i, moved = 0;
	struct folio *folio;

	for (i = 0; i < GROUP_FOLIOS; i++) {
		if (watch) {
			rfk_watch(test, pfn_to_page(r->src + g * GROUP_PAGES + i));
			continue;
		}
		folio = filemap_get_folio(r->file->f_mapping,
					  g * GROUP_FOLIOS + i);
		if (IS_ERR(folio))
			continue;
		moved += folio_pfn(folio) - r->src >= pageblock_nr_pages;
		folio_put(folio);
	}
	return moved;
}

/*
 * Compaction of the rig's zone as after boot (the skip hints, cached
 * scanner positions and deferral the last one left reset, the fill's
 * watermark boost dropped), entered by an order COMPACT_ORDER allocation
 * (the page it gets, if any, kept: a free order-3 block would spare the
 * next allocations their compaction).  How many folios of group @g it
 * moved out of src.
 */
static unsigned int dma_rig_compact(struct kunit *test, struct dma_rig *r,
				    unsigned int g)
{
	struct page *page;

	rfk_compaction_afresh(r->zone, COMPACT_ORDER);
	page = alloc_pages(RFK_DMA_MOVABLE | __GFP_NORETRY | __GFP_NOWARN,
			   COMPACT_ORDER);
	if (page && r->nr_got < ARRAY_SIZE(r->got))
		r->got[r->nr_got++] = page;
	else if (page)
		__free_pages(page, COMPACT_ORDER);
	return dma_rig_group(test, r, g, false);
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

/* A populated zone of this node other than @not with nothing waiting */
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
		.order = COMPACT_ORDER,
		.rcu_free_migrated = true,
	};

	return compaction_free_rcu_hook(&cc);
}

/* The hook part of compaction_nothing_waiting (its comment says what) */
static void nothing_waiting_checks(struct kunit *test)
{
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	int item = zone_stat_item(test, "nr_free_rcu");
	struct zone *busy, *idle;
	int i, synced = 0;
	bool held;

	held = rfk_hold(test, "that the other zone's pages still wait after the checks");
	busy = kernel_zone(test);
	idle = zone_not_waiting(test, busy);
	if (!idle) {
		kunit_info(test, "machine: no second zone with nothing waiting: no check made");
		return;
	}
	KUNIT_ASSERT_GT(test, queue_waiting(test, busy, GFP_KERNEL, NR_QUEUED),
			0);

	for (i = 0; i < COMPACT_CALLS; i++) {
		if (zone_page_state_snapshot(idle, item)) {
			kunit_info(test, "machine: something else freed into %s meanwhile: %d checks made",
				   idle->name, i);
			break;
		}
		synced += compaction_check(idle);
	}
	rfk_check_freed(test, "compaction_free_rcu()");

	KUNIT_EXPECT_EQ_MSG(test, synced, 0,
			    "checks of %s, where nothing waits, that synced",
			    idle->name);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	if (held)
		KUNIT_EXPECT_GT_MSG(test, zone_page_state_snapshot(busy, item),
				    0, "the pages waiting in %s were freed",
				    busy->name);
}

/* The hook part of compaction_rate (its comment says what) */
static void rate_checks(struct kunit *test)
{
	unsigned long drains0, drains, t0, elapsed, allowed;
	int i, synced = 0, queued = 0;
	struct zone *zone;
	bool held;

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
	rfk_check_freed(test, "compaction_free_rcu()");
	kunit_info(test, "%d checks of %s in %lu jiffies: %d synced, %lu drains",
		   COMPACT_CALLS, zone->name, elapsed, synced, drains);

	KUNIT_ASSERT_GE(test, queued, COMPACT_CALLS);
#ifdef RCU_FREE_SYNC_INTERVAL
	/* One drain per turn that passed, and the first */
	allowed = (elapsed + 1) / RCU_FREE_SYNC_INTERVAL + 1;
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
}
#else
static void nothing_waiting_checks(struct kunit *test) { }
static void rate_checks(struct kunit *test) { }
#endif

/* Skip unless nothing of the rig's zone waits (its baseline is then 0) */
static void dma_rig_require_idle(struct kunit *test, struct dma_rig *r)
{
	long waiting = zone_page_state_snapshot(r->zone,
						zone_stat_item(test, "nr_free_rcu"));

	if (waiting)
		kunit_skip(test, "machine: %ld pages of ZONE_DMA still wait from before the case",
			   waiting);
}

/*
 * Sync-light direct compaction of ZONE_DMA migrates GROUP_FOLIOS flagged
 * folios whose old copies do not wait (the case's ->migrate_folio() drops
 * their flag, as if a grace period had given them back already): when
 * the scanner leaves their block nothing of ZONE_DMA waits, while
 * NR_ELSEWHERE flagged pages of another zone do, a gate (a reader on
 * another CPU) holding their grace period back.  No drain
 * (pgfree_rcu_drain), and (gate) the other zone's pages still wait.  Up
 * to NOTHING_TRIES compactions, until one moves its whole group (a
 * failed migration spends no check).  With the hook, also COMPACT_CALLS
 * checks (compaction_free_rcu()) of a zone where nothing waits, each as
 * if the scanner had isolated flagged folios, while NR_QUEUED flagged
 * pages of another zone wait: none syncs or drains; *held*: those pages
 * still wait.
 */
static void rcu_free_bound_compaction_nothing_waiting(struct kunit *test)
{
	int item = zone_stat_item(test, "nr_free_rcu");
	struct page *elsewhere[NR_ELSEWHERE];
	unsigned int moved = 0, waits;
	unsigned long drains0, drains;
	int g, i, tries, still = 0;
	struct rfg_gate *gate;
	struct dma_rig *r;
	long waiting;
	bool hung;

	rfk_require_sync(test);
	require_compaction(test);
	r = dma_rig_get(test);
	r->unflag = true;
	dma_rig_require_idle(test, r);
	gate = rfg_start(test, "that the other zone's pages waited through the compaction");

	drains0 = vm_event(test, "pgfree_rcu_drain");
	for (tries = 0; tries < NOTHING_TRIES && moved < GROUP_FOLIOS;
	     tries++) {
		g = dma_rig_add_group(r);
		KUNIT_ASSERT_GE(test, g, 0);
		/* Pages that wait from before the compaction until after */
		rfg_inside(gate);
		for (i = 0; i < NR_ELSEWHERE; i++) {
			elsewhere[i] = alloc_page(GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, elsewhere[i]);
			KUNIT_ASSERT_NE(test, (int)page_zonenum(elsewhere[i]),
					(int)ZONE_DMA);
			rfk_put_flagged(test, elsewhere[i]);
		}
		moved = dma_rig_compact(test, r, g);
	}
	drains = vm_event(test, "pgfree_rcu_drain") - drains0;
	for (i = 0; i < NR_ELSEWHERE; i++)
		still += folio_test_rcu_free(page_folio(elsewhere[i]));
	waiting = zone_page_state_snapshot(r->zone, item);
	rfk_check_freed(test, "compaction");
	rfg_stop(gate, &waits, &hung);
	kunit_info(test, "%d compactions, %u flagged folios moved by the last, %ld pages of ZONE_DMA waiting; %lu drains, %d of %d pages of %s still waiting",
		   tries, moved, waiting, drains, still, NR_ELSEWHERE,
		   page_zone(elsewhere[0])->name);

	KUNIT_EXPECT_EQ_MSG(test, moved, GROUP_FOLIOS,
			    "flagged folios the last of %d compactions migrated",
			    tries);
	KUNIT_EXPECT_EQ_MSG(test, waiting, 0,
			    "pages of ZONE_DMA waiting after its compaction");
	KUNIT_EXPECT_EQ_MSG(test, drains, 0,
			    "compaction of ZONE_DMA, where nothing waited, drained");
	if (gate) {
		KUNIT_EXPECT_FALSE(test, hung);
		KUNIT_EXPECT_EQ_MSG(test, still, NR_ELSEWHERE,
				    "pages waiting in %s freed (the gate let %u grace-period waits end)",
				    page_zone(elsewhere[0])->name, waits);
	}

	if (mm_hook(test, COMPACTION_FREE_RCU,
		    "the checks on a compact_control of the case's own"))
		nothing_waiting_checks(test);
}

/*
 * COMPACT_CALLS sync-light direct compactions of ZONE_DMA in a row, as
 * THP faults with defrag make them, each migrating GROUP_FOLIOS freshly
 * flagged folios whose old copies wait (a gate holds their grace period
 * back): no two drains (pgfree_rcu_drain) closer than
 * RCU_FREE_SYNC_INTERVAL, by the jiffies read around the compactions
 * that drained (without the constant, at most COMPACT_CALLS / 4 drains);
 * after each compaction that drained nothing of ZONE_DMA waits
 * (nr_free_rcu back to its baseline, 0); (gate) at least one drained and
 * left nothing waiting.  Most
 * of them must move their whole group (a failed migration spends no
 * check).  With the hook, also COMPACT_CALLS checks in a row
 * (compaction_free_rcu()) of a zone where NR_QUEUED flagged pages are
 * freed before each: at most one drain per turn that passed; *held*: at
 * least one.
 */
static void rcu_free_bound_compaction_rate(struct kunit *test)
{
	unsigned long ev, rise, drains = 0, t0, t1 = 0, last = 0, gap = 0;
	int item = zone_stat_item(test, "nr_free_rcu");
	int i, g, whole = 0, close = 0, lost = 0, last_i = -1, close_i = 0;
	int back = 0, close_j = 0;
	unsigned long start;
	bool at_base;
	struct rfg_gate *gate;
	struct dma_rig *r;
	bool hung;

	rfk_require_sync(test);
	require_compaction(test);
	r = dma_rig_get(test);
	dma_rig_require_idle(test, r);
	gate = rfg_start(test, "that each compaction found its folios' old copies waiting");

	start = jiffies;
	for (i = 0; i < COMPACT_CALLS; i++) {
		g = dma_rig_add_group(r);
		KUNIT_ASSERT_GE(test, g, 0);
		dma_rig_group(test, r, g, true);
		rfg_inside(gate);
		ev = vm_event(test, "pgfree_rcu_drain");
		t0 = jiffies;
		whole += dma_rig_compact(test, r, g) == GROUP_FOLIOS;
		t1 = jiffies;
		rise = vm_event(test, "pgfree_rcu_drain") - ev;
		rfk_check_freed(test, "compaction");
		at_base = !zone_page_state_snapshot(r->zone, item);
		back += at_base;
		lost += rise && !at_base;
		for (; rise; rise--, drains++) {
#ifdef RCU_FREE_SYNC_INTERVAL
			/*
			 * Each drain took the turn at jiffies | 1: this one in
			 * [t0, t1], the one before from @last on
			 */
			if (last_i >= 0 &&
			    time_before(t1 + 1, last + RCU_FREE_SYNC_INTERVAL) &&
			    !close++) {
				close_i = last_i;
				close_j = i;
				gap = t1 + 1 - last;
			}
#endif
			last = t0;
			last_i = i;
		}
	}
	rfg_stop(gate, NULL, &hung);
	kunit_info(test, "%d compactions of ZONE_DMA in %lu jiffies, %d moved their whole group: %lu drains, %d left nothing waiting",
		   COMPACT_CALLS, t1 - start, whole, drains, back);

	KUNIT_EXPECT_GE_MSG(test, whole, COMPACT_CALLS / 2,
			    "compactions that migrated all their flagged folios");
#ifdef RCU_FREE_SYNC_INTERVAL
	KUNIT_EXPECT_EQ_MSG(test, close, 0,
			    "drains closer than RCU_FREE_SYNC_INTERVAL (%d jiffies) to the one before; first: compactions %d and %d, within %lu jiffies",
			    (int)RCU_FREE_SYNC_INTERVAL, close_i, close_j, gap);
#else
	KUNIT_EXPECT_LE_MSG(test, drains, COMPACT_CALLS / 4,
			    "drains of %d compactions in a row", COMPACT_CALLS);
#endif
	KUNIT_EXPECT_EQ_MSG(test, lost, 0,
			    "compactions that drained and left pages of ZONE_DMA waiting");
	if (gate) {
		KUNIT_EXPECT_FALSE(test, hung);
		KUNIT_EXPECT_GE_MSG(test, drains, 1,
				    "no compaction freed the folios it migrated");
		KUNIT_EXPECT_GE_MSG(test, back, 1,
				    "no compaction left ZONE_DMA with nothing waiting");
	}

	if (!mm_hook(test, COMPACTION_FREE_RCU,
		     "the checks on a compact_control of the case's own"))
		return;
#ifdef RCU_FREE_SYNC_INTERVAL
	/* The turn free again for the checks, as at the case's start */
	schedule_timeout_uninterruptible(RCU_FREE_SYNC_INTERVAL + 2);
#endif
	rate_checks(test);
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
