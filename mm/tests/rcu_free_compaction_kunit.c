// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for compaction and the pages waiting for a grace period
 * (rcu-free series, patch 8): the real compact_zone() loop frees the old
 * copies of the flagged folios it migrated when an allocation waits for
 * the block (sync-light direct compaction), and leaves them, and every
 * other waiting page, alone otherwise.
 *
 * Where the hook is there, the cases hold the waiting lists
 * (rcu_free_hold()), so that only compaction can free what waits, and
 * check what still waits afterwards; without it a gate does the same
 * (rcu_free_gate.h: a reader on another CPU that holds grace periods
 * back while the case's task does not wait for one), and only on a
 * machine where neither can be are those parts skipped by name, the
 * migrations, the drains counted, the allocation's outcome and the grace
 * period of every old copy seen back deciding.
 */

#include <kunit/test.h>
#include <linux/compaction.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

#include "rcu_free_gate.h"
#include "rcu_free_helpers.h"

static void require_compaction(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_COMPACTION))
		kunit_skip(test, "config: CONFIG_COMPACTION is off");
}

/*
 * The compaction cases run the real compact_zone() loop on a ZONE_DMA the
 * case owns page by page, entered as the kernel enters it: direct
 * compaction from a high-order allocation (sync-light, or async for a
 * costly order), and /proc/sys/vm/compact_memory (sync, order -1).
 *
 *   src: a movable pageblock whose first 8 or 16 pages hold the folios of
 *        a ramfs file, the only pages of the zone on an LRU (or, gapped,
 *        whose every 8th page is held and the others hold them);
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
struct migrations {
	bool refuse_async;
	unsigned long tried, moved;	/* BIT(enum migrate_mode) */
	int nr_moved;
};

/*
 * The case's file is a ramfs inode whose page cache the case fills with
 * pages of its own (its i_private: the case's struct migrations); its
 * ->migrate_folio() is migrate_folio(), which tmpfs uses too, and sees
 * the mode of every migration.  Sync modes try MIGRATE_ASYNC first
 * (migrate_pages_sync()); refusing it makes a folio move in the mode
 * compaction runs in.
 */
static int record_migrate_folio(struct address_space *mapping,
				struct folio *dst, struct folio *src,
				enum migrate_mode mode)
{
	struct migrations *m = mapping->host->i_private;
	int ret;

	/* A file whose case is over: its record is gone */
	if (!m)
		return migrate_folio(mapping, dst, src, mode);
	m->tried |= BIT(mode);
	if (m->refuse_async && mode == MIGRATE_ASYNC)
		return -EAGAIN;
	ret = migrate_folio(mapping, dst, src, mode);
	if (!ret) {
		m->moved |= BIT(mode);
		m->nr_moved++;
	}
	return ret;
}

static const struct address_space_operations record_aops = {
	.dirty_folio	= noop_dirty_folio,
	.migrate_folio	= record_migrate_folio,
};

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
	bool flagged, pinning;
	/* Every 8th page of src held, so that no order-3 block frees up */
	bool gapped;
	/* Frees are held back (rcu_free_hold(), or @gate) */
	bool held;
	struct rfg_gate *gate;
	struct migrations mig;
};

static void dma_layout_release(void *data)
{
	struct dma_layout *l = data;
	int i;

	/*
	 * The file may outlive the case (its last fput can be deferred): it
	 * must not record into freed memory, which the next case's record
	 * may occupy, nor keep folios a later case's compaction migrates.
	 */
	l->file->f_mapping->host->i_private = NULL;
	truncate_inode_pages(l->file->f_mapping, 0);
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

/* Where in src the file's page @index sits */
static unsigned long file_off(const struct dma_layout *l, unsigned int index)
{
	return l->gapped ? index + index / 7 : index;
}

/* The byte every byte of the file's page @index holds */
static u8 file_byte(unsigned int index)
{
	return 0x40 + index;
}

/* The lowest order compaction of @zone failed at since its last success */
static int compact_order_failed(struct zone *zone)
{
#ifdef CONFIG_COMPACTION
	return zone->compact_order_failed;
#else
	return 0;
#endif
}

/*
 * Lay ZONE_DMA out as above with the file's first @nr_folios pages the
 * first pages of src (every 8th skipped if @gapped), flagged if @flagged,
 * each with an extra reference if @pinned.  Frees wait from here on:
 * the lists are held, where the hook is there and @gate is false, else a
 * gate holds their grace period back (a free on this CPU then starts its
 * batch, and the frees after it wait on the next list: a path that takes
 * the lists takes both); @part says what the case cannot check with
 * neither.
 */
static struct dma_layout *dma_layout_setup(struct kunit *test,
					   unsigned int nr_folios,
					   bool flagged, bool pinned,
					   bool gapped, bool gate,
					   const char *part)
{
	const unsigned long nr_block = pageblock_nr_pages;
	struct dma_layout *l;
	struct folio *folio;
	unsigned long i;
	int ret;

	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	l->pages = rfk_dma_pages(test);
	KUNIT_ASSERT_TRUE(test, !pinned || nr_folios <= COMPACT_MAX_FOLIOS);
	l->nr_folios = nr_folios;
	l->flagged = flagged;
	l->pinning = pinned;
	l->gapped = gapped;
	l->file = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL),
				"compacted");
	l->file->f_mapping->host->i_private = &l->mig;
	l->file->f_mapping->a_ops = &record_aops;
	ret = kunit_add_action_or_reset(test, dma_layout_release, l);
	KUNIT_ASSERT_EQ(test, ret, 0);

	ret = rfk_dma_blocks(l->pages, &l->nr, &l->src, &l->dst);
	if (ret == -ENOSPC)
		kunit_skip(test,
			   "machine: no two free pageblocks in ZONE_DMA with one between");
	KUNIT_ASSERT_EQ_MSG(test, ret, 0,
			    "src pageblock %#lx or dst %#lx not movable",
			    l->src, l->dst);
	l->zone = page_zone(pfn_to_page(l->src));
	KUNIT_ASSERT_EQ(test, (int)zone_idx(l->zone), (int)ZONE_DMA);
	l->nr = rfk_fill_zone_dma(l->pages, l->nr, false);
	l->nr = rfk_fill_zone_dma(l->pages, l->nr, true);
	KUNIT_ASSERT_GT(test, l->nr, (int)(2 * nr_block + NR_UNRELATED));

	if (MM_HOOK(RCU_FREE_HOLD) && !gate)
		l->held = rfk_hold(test, part);
	else
		l->gate = rfg_start(test, part);
	l->held = l->held || l->gate;
	rfg_inside(l->gate);
	for (i = 0; i < nr_folios; i++) {
		folio = page_folio(l->pages[file_off(l, i)]);
		l->pages[file_off(l, i)] = NULL;
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
	struct page *old;

	for (i = 0; i < l->nr_folios; i++) {
		old = pfn_to_page(l->src + file_off(l, i));
		waiting += folio_test_rcu_free(page_folio(old)) &&
			   !page_count(old);
	}
	return waiting;
}

/*
 * Watch the file's flagged folios, whose last put is compaction's when it
 * migrates them
 */
static void dma_layout_watch(struct kunit *test, struct dma_layout *l)
{
	unsigned int i;

	if (!l->flagged || l->pinning)
		return;
	for (i = 0; i < l->nr_folios; i++)
		rfk_watch(test, pfn_to_page(l->src + file_off(l, i)));
}

/*
 * Let grace periods end again (the gate, if any, stops): after the case
 * has read what waits.  Fails if the gate ended a section by its hang
 * guard: then something waited without the case's task waiting.
 */
static void dma_layout_open(struct kunit *test, struct dma_layout *l)
{
	bool hung;

	rfg_stop(l->gate, NULL, &hung);
	l->gate = NULL;
	KUNIT_EXPECT_FALSE_MSG(test, hung,
			       "the gate held grace periods back 10 s with the case's task not waiting for one");
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
	rfg_inside(l->gate);
	for (i = 0; i < nr; i++) {
		if (in_dma) {
			/* Held pages of the fill, past the two pageblocks */
			pages[i] = l->pages[l->nr - 1 - i];
			l->pages[l->nr - 1 - i] = NULL;
		} else {
			pages[i] = alloc_page(GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		}
		rfk_put_flagged(test, pages[i]);
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

static struct page *alloc_compacting(struct kunit *test, struct dma_layout *l,
				     unsigned int order)
{
	struct page *page;

	dma_layout_watch(test, l);
	rfk_compaction_afresh(l->zone, order);
	rfg_inside(l->gate);
	page = alloc_pages(RFK_DMA_MOVABLE | __GFP_NORETRY | __GFP_NOWARN, order);
	rfk_check_freed(test, "compaction");
	return page;
}

/*
 * Sync-light direct compaction (an order-3 allocation) migrates 8 flagged
 * folios out of the only block that can become free: when the migration
 * scanner leaves it, compaction frees their old copies, the block is free
 * and the allocation gets it.  A gate holds their grace period back, with
 * or without the hooks: the first old copy starts this CPU's batch and the
 * others wait on its next list, so compaction must free both lists (one
 * drain, nothing left waiting), or the block stays busy.
 */
static void rcu_free_compaction_sync_light_frees(struct kunit *test)
{
	/* Counters first: a missing one must not leave the zone filled */
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	unsigned long stall0 = vm_event(test, "compact_stall");
	struct dma_layout *l;
	unsigned long pfn, drains;
	struct page *page;
	long waiting0, waiting;

	require_compaction(test);
	l = dma_layout_setup(test, 8, true, false, false, true,
			     "that compaction, not a grace period, freed the old copies");
	waiting0 = dma_waiting(test, l);
	l->mig.refuse_async = true;
	page = alloc_compacting(test, l, 3);
	pfn = page ? page_to_pfn(page) : 0;
	drains = vm_event(test, "pgfree_rcu_drain") - drains0;
	waiting = dma_waiting(test, l);
	dma_layout_open(test, l);
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_EQ_MSG(test, l->mig.moved, BIT(MIGRATE_SYNC_LIGHT),
			    "modes that moved a folio (tried %#lx)",
			    l->mig.tried);
	KUNIT_EXPECT_EQ(test, l->mig.nr_moved, 8);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 8);
	KUNIT_EXPECT_GE(test, vm_event(test, "compact_stall") - stall0, 1);
	KUNIT_EXPECT_EQ_MSG(test, pfn, l->src,
			    "the allocation did not get the emptied block");
	KUNIT_EXPECT_LE(test, drains, 1);
	/* The block was allocated whole: none of them can still wait */
	KUNIT_EXPECT_EQ(test, dma_layout_old_waiting(l), 0);
	if (l->held) {
		KUNIT_EXPECT_EQ(test, drains, 1);
		KUNIT_EXPECT_EQ_MSG(test, waiting, waiting0,
				    "old copies still waiting");
	}
}

/* Flagged folios of the gapped case: more than one isolation batch */
#define GAPPED_FOLIOS	40

/*
 * Sync-light direct compaction that migrates flagged folios in two
 * batches, none of which frees an order-3 block (every 8th page of src
 * is held): compact_zone() calls rcu_free_sync() once, not once per batch
 * (one drain, as pgfree_rcu_drain counts them); *held*: the old copies
 * of the batch after that drain still wait, for a normal grace period.
 */
static void rcu_free_compaction_one_sync_per_pass(struct kunit *test)
{
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	unsigned int old_waiting;
	struct dma_layout *l;
	unsigned long drains;
	struct page *page;

	require_compaction(test);
	l = dma_layout_setup(test, GAPPED_FOLIOS, true, false, true, false,
			     "that the first batch waited for the sync and the later one after it");
	l->mig.refuse_async = true;
	page = alloc_compacting(test, l, 3);
	drains = vm_event(test, "pgfree_rcu_drain") - drains0;
	old_waiting = dma_layout_old_waiting(l);
	dma_layout_open(test, l);
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_EQ_MSG(test, l->mig.moved, BIT(MIGRATE_SYNC_LIGHT),
			    "modes that moved a folio (tried %#lx)",
			    l->mig.tried);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), GAPPED_FOLIOS);
	KUNIT_EXPECT_NULL_MSG(test, page, "an order-3 block came free");
	KUNIT_EXPECT_LE_MSG(test, drains, 1,
			    "rcu_free_sync() calls in one compact_zone()");
	if (l->held) {
		KUNIT_EXPECT_EQ(test, drains, 1);
		KUNIT_EXPECT_GT_MSG(test, old_waiting, 0,
				    "a later batch was freed by a second sync");
		KUNIT_EXPECT_LT_MSG(test, old_waiting, GAPPED_FOLIOS,
				    "the first batch was not freed");
	}
}

/*
 * Async direct compaction (a costly order-4 allocation) migrates 16
 * flagged folios but does not wait for a grace period: no drain; where
 * they are held, their old copies still wait and the allocation fails.
 * No sync-light round ran: it would have failed and deferred compaction
 * at order 4.
 */
static void rcu_free_compaction_async_leaves(struct kunit *test)
{
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	unsigned long stall0 = vm_event(test, "compact_stall");
	struct dma_layout *l;
	unsigned int old_waiting;
	struct page *page;
	long waiting0, waiting;
	int failed;

	require_compaction(test);
	l = dma_layout_setup(test, 16, true, false, false, false,
			     "that the old copies still wait and the allocation fails");
	waiting0 = dma_waiting(test, l);
	page = alloc_compacting(test, l, 4);
	failed = compact_order_failed(l->zone);
	waiting = dma_waiting(test, l) - waiting0;
	old_waiting = dma_layout_old_waiting(l);
	dma_layout_open(test, l);
	if (page)
		__free_pages(page, 4);

	KUNIT_EXPECT_EQ_MSG(test, l->mig.tried, BIT(MIGRATE_ASYNC),
			    "modes tried");
	KUNIT_EXPECT_EQ(test, l->mig.nr_moved, 16);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 16);
	KUNIT_EXPECT_GE(test, vm_event(test, "compact_stall") - stall0, 1);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	if (l->held) {
		KUNIT_EXPECT_GT_MSG(test, failed, 4,
				    "a sync round deferred order 4");
		KUNIT_EXPECT_NULL(test, page);
		KUNIT_EXPECT_EQ(test, waiting, 16);
		KUNIT_EXPECT_EQ(test, old_waiting, 16);
	}
}

/*
 * Sync-light direct compaction that migrates only unflagged folios,
 * while other pages of the zone wait: no rcu_free_sync(), so nothing was
 * drained and (held) they still wait.
 */
static void rcu_free_compaction_unrelated_left(struct kunit *test)
{
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	struct page **unrelated, *page;
	struct dma_layout *l;
	long waiting, waiting_after;
	int still;

	require_compaction(test);
	l = dma_layout_setup(test, 8, false, false, false, false,
			     "that the other pages of the zone still wait");
	unrelated = queue_unrelated(test, l, NR_UNRELATED, true);
	waiting = dma_waiting(test, l);
	l->mig.refuse_async = true;
	page = alloc_compacting(test, l, 3);
	still = still_waiting(unrelated, NR_UNRELATED);
	waiting_after = dma_waiting(test, l);
	dma_layout_open(test, l);
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_EQ_MSG(test, l->mig.moved, BIT(MIGRATE_SYNC_LIGHT),
			    "modes that moved a folio (tried %#lx)",
			    l->mig.tried);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 8);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	if (l->held) {
		KUNIT_EXPECT_EQ(test, still, NR_UNRELATED);
		KUNIT_EXPECT_EQ(test, waiting_after, waiting);
	}
}

/*
 * Sync-light direct compaction isolates 8 flagged folios whose migration
 * fails (each has an extra reference): nothing of ZONE_DMA waits, so no
 * rcu_free_sync() when the scanner leaves the block.  rcu_free_sync()
 * drains every zone: pages waiting in another zone would show a call;
 * nothing was drained, and (held) they still wait.
 */
static void rcu_free_compaction_nothing_waiting(struct kunit *test)
{
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	struct page **elsewhere, *page;
	struct dma_layout *l;
	long waiting;
	int still;

	require_compaction(test);
	l = dma_layout_setup(test, 8, true, true, false, false,
			     "that the pages waiting in another zone still wait");
	elsewhere = queue_unrelated(test, l, NR_UNRELATED, false);
	l->mig.refuse_async = true;
	page = alloc_compacting(test, l, 3);
	still = still_waiting(elsewhere, NR_UNRELATED);
	waiting = dma_waiting(test, l);
	dma_layout_open(test, l);
	if (page)
		__free_pages(page, 3);

	KUNIT_EXPECT_TRUE_MSG(test, l->mig.tried & BIT(MIGRATE_SYNC_LIGHT),
			      "modes tried %#lx", l->mig.tried);
	KUNIT_EXPECT_EQ(test, l->mig.nr_moved, 0);
	KUNIT_EXPECT_EQ(test, waiting, 0);
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	if (l->held)
		KUNIT_EXPECT_EQ(test, still, NR_UNRELATED);
}

/*
 * /proc/sys/vm/compact_memory (MIGRATE_SYNC, order -1) migrates 8 flagged
 * folios.  A full compaction has no allocation to hurry and does not free
 * the waiting pages (compact_zone() only looks for order > 0): nothing was
 * drained, (held) the old copies still wait afterwards, and the series'
 * own grace-period work then gives them back.
 */
static void rcu_free_compaction_full_waits(struct kunit *test)
{
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	long waiting0, waiting_after, waiting_later;
	int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	struct vfsmount *proc;
	unsigned int old_waiting;
	struct dma_layout *l;
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;

	require_compaction(test);
	proc = mm_test_mount(test, "proc", NULL);
	l = dma_layout_setup(test, 8, true, false, false, false,
			     "that the old copies still wait after compaction");
	waiting0 = dma_waiting(test, l);
	file = file_open_root_mnt(proc, "sys/vm/compact_memory", O_WRONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "open compact_memory: %ld",
			       PTR_ERR(file));
	l->mig.refuse_async = true;
	dma_layout_watch(test, l);
	rfg_inside(l->gate);
	ret = kernel_write(file, "1", 1, &pos);
	fput(file);
	rfk_check_freed(test, "full compaction");
	waiting_after = dma_waiting(test, l);
	old_waiting = dma_layout_old_waiting(l);

	/* Give the held pages their grace period */
	dma_layout_open(test, l);
	rfk_release(test);
	rfk_wait_watched(test, "the grace-period work");
	waiting_later = rfk_zone_stat_settle(l->zone, nr_free_rcu, waiting0);

	KUNIT_EXPECT_EQ(test, ret, 1);
	KUNIT_EXPECT_EQ_MSG(test, l->mig.moved, BIT(MIGRATE_SYNC),
			    "modes that moved a folio (tried %#lx)",
			    l->mig.tried);
	KUNIT_EXPECT_EQ(test, dma_layout_moved(test, l), 8);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_drain") - drains0, 0);
	if (l->held) {
		KUNIT_EXPECT_EQ(test, waiting_after - waiting0, 8);
		KUNIT_EXPECT_EQ(test, old_waiting, 8);
	}
	KUNIT_EXPECT_EQ_MSG(test, waiting_later, waiting0,
			    "not back after their grace period");
	KUNIT_EXPECT_EQ(test, dma_layout_old_waiting(l), 0);
}

/**
 * struct synced_case - a compact_zone() call's state at a scanner's check
 * @desc: the row's name
 * @synced: the call synced once already
 */
struct synced_case {
	const char *desc;
	bool synced;
};

static const struct synced_case synced_cases[] = {
	{ "first sync of the call", false },
	{ "the call synced already", true },
};

static void synced_case_desc(const struct synced_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(synced_case, synced_cases, synced_case_desc);

/*
 * The check sync-light compaction makes when its scanner leaves a block
 * it migrated flagged folios from (compaction_free_rcu(), by its hook, on
 * a compact_control of the case's), with the turn of the rated drains
 * forced due and a flagged page of the zone held waiting: the call's
 * first sync frees it (true, the page back); once the call synced, no
 * other check of it syncs, however the turn stands (false, the page
 * still waits).  The rate limit alone would hide a second sync within
 * RCU_FREE_SYNC_INTERVAL: one_sync_per_pass cannot tell them apart.
 */
static void rcu_free_compaction_synced_once(struct kunit *test)
{
	const struct synced_case *c = test->param_value;
	bool ret = false, waits;
	struct page *page;

	rfk_require_sync(test);
	MM_HOOK_REQUIRE(test, COMPACTION_FREE_RCU);
	MM_HOOK_REQUIRE(test, RCU_FREE_TURN_TAKE);
	if (!rfk_hold(test, "that only the check's sync frees the page"))
		kunit_skip(test, MM_HOOK_ABSENT "%s", mm_hook_name_RCU_FREE_HOLD);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	rfk_put_flagged(test, page);

	rfk_turn_force(test, RCU_FREE_TURN_DUE);
#if MM_HOOK(COMPACTION_FREE_RCU)
	{
		struct compact_control cc = {
			.zone = page_zone(page),
			.mode = MIGRATE_SYNC_LIGHT,
			.order = 3,
			.rcu_free_migrated = true,
			.rcu_free_synced = c->synced,
		};

		ret = compaction_free_rcu_hook(&cc);
	}
#endif
	rfk_turn_release(test);
	waits = folio_test_rcu_free(page_folio(page));
	rfk_check_freed(test, "compaction_free_rcu()");

	KUNIT_EXPECT_EQ_MSG(test, ret, !c->synced, "what the check returned");
	KUNIT_EXPECT_EQ_MSG(test, waits, c->synced,
			    c->synced ? "a second sync in one compact_zone() call" :
			    "the page still waits after the call's first sync");
}

static struct kunit_case rcu_free_compaction_cases[] = {
	KUNIT_CASE(rcu_free_compaction_sync_light_frees),
	KUNIT_CASE(rcu_free_compaction_one_sync_per_pass),
	KUNIT_CASE_PARAM(rcu_free_compaction_synced_once, synced_case_gen_params),
	KUNIT_CASE(rcu_free_compaction_async_leaves),
	KUNIT_CASE(rcu_free_compaction_unrelated_left),
	KUNIT_CASE(rcu_free_compaction_nothing_waiting),
	KUNIT_CASE(rcu_free_compaction_full_waits),
	{}
};

static struct kunit_suite rcu_free_compaction_suite = {
	.name = "rcu_free_compaction",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_compaction_cases,
};

kunit_test_suite(rcu_free_compaction_suite);

MODULE_DESCRIPTION("KUnit tests for compaction and the pages waiting for a grace period");
MODULE_LICENSE("GPL");
