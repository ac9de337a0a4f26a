// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the deferred free of PG_rcu_free folios (rcu-free series,
 * patches 1-9): a flagged folio goes back to the allocator only after an RCU
 * grace period, and everything that needs the memory back sooner can get it.
 *
 * Strategy: nothing sets PG_rcu_free in these patches, so each case sets it
 * on pages of its own with folio_set_rcu_free() and drops the last
 * reference.  No grace period is waited out.  Cases about the grace period
 * free inside their own rcu_read_lock() section, so none can end before
 * they look.  Cases about what has to free the waiting pages early
 * (drain before OOM, alloc_contig_range(), compaction, memory failure)
 * replace rcu_free_start() with a KUnit static stub while they free: what
 * they free then stays on the lists with no grace period started for it,
 * and only the code under test can free it (the case's exit starts the
 * grace period for whatever is left).  Holding a real reader instead would
 * also stall the synchronize_rcu() calls on those paths (lru_cache_disable()
 * in alloc_contig_range(), for one).  Counters are read by name
 * (nr_free_rcu, pgfree_rcu, pgfree_rcu_expedite, pgfree_rcu_drain), so a
 * tree that lacks the patch adding one fails with a message saying so.
 *
 * Without CONFIG_PAGE_RCU_FREE (off, or rcu-free not applied) every case
 * skips and says why.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/pipe_fs_i.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/splice.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "../page_alloc.h"
#include "kunit_mount.h"
#include "vmstat_by_name.h"

#ifdef CONFIG_PAGE_RCU_FREE

/* Pages of ZONE_DMA the drain cases can hold at most */
#define DMA_MAX_PAGES	(SZ_32M >> PAGE_SHIFT)

static u8 pattern(unsigned long pfn, unsigned int off)
{
	return (u8)((pfn * 31 + off * 7) | 1);
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

static void rcu_free_start_held(struct rcu_free_pcpu *r)
{
}

/*
 * What the case frees from now on waits on this CPU's lists with no grace
 * period started for it: only a drain or an expedite frees it.
 */
static void hold_normal_free(struct kunit *test)
{
	kunit_activate_static_stub(test, rcu_free_start, rcu_free_start_held);
	test->priv = rcu_free_start_held;
}

/* Every case starts and ends with nothing waiting */
static int rcu_free_test_init(struct kunit *test)
{
	rcu_free_wait_grace();
	return 0;
}

static void rcu_free_test_exit(struct kunit *test)
{
	/* The grace period for what the case left waiting */
	if (test->priv == rcu_free_start_held)
		kunit_deactivate_static_stub(test, rcu_free_start);
	rcu_free_wait_grace();
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
	long waiting0 = zone_stat(test, "nr_free_rcu");
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
	waiting_in = zone_stat(test, "nr_free_rcu");
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
	waiting_after = zone_stat(test, "nr_free_rcu");
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_rcu_free(folio),
			       "still waiting after a grace period");
	KUNIT_EXPECT_EQ(test, waiting_after, waiting0);
}

/* A folio without the flag is freed at once, and nothing is counted */
static void rcu_free_unflagged_freed_at_once(struct kunit *test)
{
	unsigned long ev0 = vm_event(test, "pgfree_rcu");
	long waiting0 = zone_stat(test, "nr_free_rcu");
	unsigned long queued_in;
	long waiting_in;
	struct page *page;

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);

	rcu_read_lock();
	put_page(page);
	queued_in = rcu_free_nr_queued();
	waiting_in = zone_stat(test, "nr_free_rcu");
	rcu_read_unlock();

	KUNIT_EXPECT_EQ(test, queued_in, 0);
	KUNIT_EXPECT_EQ(test, waiting_in, waiting0);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu"), ev0);
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

#ifdef rcu_free_memory_short
static bool memory_short_always(struct zone *zone)
{
	return true;
}

static bool memory_short_never(struct zone *zone)
{
	return false;
}
#endif

/*
 * Defer RCU_FREE_EXPEDITE_PAGES pages on one CPU inside a read-side
 * section (no normal grace period can take any of them meanwhile) with
 * the zone's shortage forced to @is_short; the expedites that ran.
 */
static unsigned long pile_up(struct kunit *test, bool is_short)
{
#ifdef rcu_free_memory_short
	const int nr = RCU_FREE_EXPEDITE_PAGES;
	struct page **pages;
	unsigned long ev0;
	int i;

	if (is_short)
		kunit_activate_static_stub(test, rcu_free_memory_short,
					   memory_short_always);
	else
		kunit_activate_static_stub(test, rcu_free_memory_short,
					   memory_short_never);
	pages = kunit_kcalloc(test, nr, sizeof(*pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	for (i = 0; i < nr; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
	}
	ev0 = vm_event(test, "pgfree_rcu_expedite");

	rcu_read_lock();
	migrate_disable();
	for (i = 0; i < nr; i++)
		put_flagged(pages[i]);
	migrate_enable();
	rcu_read_unlock();

	/* Runs the expedite work too, if it was queued */
	rcu_free_wait_grace();
	return vm_event(test, "pgfree_rcu_expedite") - ev0;
#else
	KUNIT_FAIL_AND_ABORT(test, "no expedite: patch 5 is not applied");
	return 0;
#endif
}

/* A CPU's pile-up past the threshold with memory short expedites once */
static void rcu_free_expedite_when_short(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pile_up(test, true), 1);
}

/* The same pile-up with memory plentiful waits for a normal grace period */
static void rcu_free_no_expedite_when_plentiful(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pile_up(test, false), 0);
}

#ifdef rcu_free_drain_helps
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

static void drain_case_desc(const struct drain_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(drain, drain_cases, drain_case_desc);
#define DRAIN_DECISION_CASE \
	KUNIT_CASE_PARAM(rcu_free_drain_decision, drain_gen_params)
#else
#define DRAIN_DECISION_CASE KUNIT_CASE(rcu_free_drain_decision)
#endif

/* The drain-before-OOM decision on constructed inputs */
static void rcu_free_drain_decision(struct kunit *test)
{
#ifdef rcu_free_drain_helps
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
#ifdef rcu_free_memory_short
	/* The drain must do it, not an expedite */
	kunit_activate_static_stub(test, rcu_free_memory_short,
				   memory_short_never);
#endif
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
	long waiting0 = zone_stat(test, "nr_free_rcu");
	unsigned long ev0;
	struct page *page;
	long left;
	int i, n;

	n = fill_zone_dma(pages, 0, false);
	KUNIT_ASSERT_GT(test, n, 0);
	ev0 = vm_event(test, "pgfree_rcu_drain");

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
	long waiting0 = zone_stat(test, "nr_free_rcu");
	struct page *page;
	unsigned long ev0;
	int i, n, held = 0;
	long left;

	drain_all_pages(NULL);
	n = fill_zone_dma(pages, 0, false);
	n = fill_zone_dma(pages, n, true);
	KUNIT_ASSERT_GT(test, n, 0);
	ev0 = vm_event(test, "pgfree_rcu_drain");

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

/*
 * A pageblock whose pages all wait for a grace period, held back, is
 * allocated by alloc_contig_range(): it frees them instead of failing.
 */
static void rcu_free_alloc_contig_range(struct kunit *test)
{
#ifdef CONFIG_CONTIG_ALLOC
	const unsigned long nr = pageblock_nr_pages;
	unsigned long pfn, i, ev0;
	struct page *block;
	int ret;

	block = alloc_pages(GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN,
			    pageblock_order);
	if (!block)
		kunit_skip(test, "no free pageblock");
	split_page(block, pageblock_order);
	pfn = page_to_pfn(block);

	ev0 = vm_event(test, "pgfree_rcu_drain");
	hold_normal_free(test);
	for (i = 0; i < nr; i++)
		put_flagged(pfn_to_page(pfn + i));
	ret = alloc_contig_range(pfn, pfn + nr, ACR_FLAGS_NONE,
				 GFP_KERNEL | __GFP_NOWARN);
	if (!ret)
		free_contig_range(pfn, nr);

	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_GE(test, vm_event(test, "pgfree_rcu_drain") - ev0, 1);
#else
	kunit_skip(test, "needs CONTIG_ALLOC");
#endif
}

/*
 * With a page of its zone waiting for a grace period, held back, sync
 * compaction frees the waiting pages; async compaction leaves them.
 */
static void rcu_free_compaction(struct kunit *test, enum migrate_mode mode)
{
#ifdef compaction_free_rcu
	struct compact_control cc = { .mode = mode };
	struct page *page;
	bool freed, waiting;

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	cc.zone = page_zone(page);

	hold_normal_free(test);
	put_flagged(page);
	freed = compaction_free_rcu(&cc);
	waiting = folio_test_rcu_free(page_folio(page));

	KUNIT_EXPECT_EQ(test, freed, mode != MIGRATE_ASYNC);
	KUNIT_EXPECT_EQ(test, waiting, mode == MIGRATE_ASYNC);
#else
	KUNIT_FAIL(test, "compaction does not free them: patch 8 is not applied");
#endif
}

/* Sync compaction frees the migrated folios that wait */
static void rcu_free_compaction_sync_frees(struct kunit *test)
{
	rcu_free_compaction(test, MIGRATE_SYNC);
}

/* Async compaction does not wait for a grace period */
static void rcu_free_compaction_async_leaves(struct kunit *test)
{
	rcu_free_compaction(test, MIGRATE_ASYNC);
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

/*
 * SPLICE_F_MOVE from the page cache: the receiving end cannot steal the
 * folio from its file, so it copies; the folio stays in the page cache.
 */
static void rcu_free_splice_move_copies(struct kunit *test)
{
	struct vfsmount *mnt = kunit_kern_mount(test, "ramfs", NULL);
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
	data = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memset(data, 0x5a, PAGE_SIZE);
	ret = kernel_write(file, data, PAGE_SIZE, &pos);
	KUNIT_ASSERT_EQ(test, ret, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, create_pipe_files(pipes, 0), 0);
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
	fput(pipes[0]);
	fput(pipes[1]);
	fput(file);
}

static struct kunit_case rcu_free_test_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_flagged_waits_for_grace_period,
			 folio_order_gen_params),
	KUNIT_CASE(rcu_free_unflagged_freed_at_once),
	KUNIT_CASE(rcu_free_reader_sees_old_contents),
	KUNIT_CASE(rcu_free_expedite_when_short),
	KUNIT_CASE(rcu_free_no_expedite_when_plentiful),
	DRAIN_DECISION_CASE,
	KUNIT_CASE(rcu_free_drain_before_oom),
	KUNIT_CASE(rcu_free_drain_that_cannot_help_ends),
	KUNIT_CASE(rcu_free_alloc_contig_range),
	KUNIT_CASE(rcu_free_compaction_sync_frees),
	KUNIT_CASE(rcu_free_compaction_async_leaves),
	KUNIT_CASE(rcu_free_memory_failure),
	KUNIT_CASE(rcu_free_soft_offline),
	KUNIT_CASE(rcu_free_splice_move_copies),
	{}
};

#else /* !CONFIG_PAGE_RCU_FREE */

static int rcu_free_test_init(struct kunit *test)
{
	kunit_skip(test, "CONFIG_PAGE_RCU_FREE is off or rcu-free is not applied");
	return 0;
}

static void rcu_free_test_exit(struct kunit *test)
{
}

static void rcu_free_not_built(struct kunit *test)
{
}

/* The same case names, so a run without the series lists each one skipped */
#define RCU_FREE_SKIPPED(case_name) \
	{ .run_case = rcu_free_not_built, .name = #case_name }

static struct kunit_case rcu_free_test_cases[] = {
	RCU_FREE_SKIPPED(rcu_free_flagged_waits_for_grace_period),
	RCU_FREE_SKIPPED(rcu_free_unflagged_freed_at_once),
	RCU_FREE_SKIPPED(rcu_free_reader_sees_old_contents),
	RCU_FREE_SKIPPED(rcu_free_expedite_when_short),
	RCU_FREE_SKIPPED(rcu_free_no_expedite_when_plentiful),
	RCU_FREE_SKIPPED(rcu_free_drain_decision),
	RCU_FREE_SKIPPED(rcu_free_drain_before_oom),
	RCU_FREE_SKIPPED(rcu_free_drain_that_cannot_help_ends),
	RCU_FREE_SKIPPED(rcu_free_alloc_contig_range),
	RCU_FREE_SKIPPED(rcu_free_compaction_sync_frees),
	RCU_FREE_SKIPPED(rcu_free_compaction_async_leaves),
	RCU_FREE_SKIPPED(rcu_free_memory_failure),
	RCU_FREE_SKIPPED(rcu_free_soft_offline),
	RCU_FREE_SKIPPED(rcu_free_splice_move_copies),
	{}
};

#endif /* CONFIG_PAGE_RCU_FREE */

static struct kunit_suite rcu_free_test_suite = {
	.name = "rcu_free",
	.init = rcu_free_test_init,
	.exit = rcu_free_test_exit,
	.test_cases = rcu_free_test_cases,
};

kunit_test_suite(rcu_free_test_suite);

MODULE_DESCRIPTION("KUnit tests for the deferred free of PG_rcu_free folios");
MODULE_LICENSE("GPL");
