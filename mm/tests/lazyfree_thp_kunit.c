// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for reclaim of lazyfree (MADV_FREE) PMD-mapped THPs.
 *
 * Strategy: each case maps anonymous memory into the test kthread's own mm
 * with kunit_vm_mmap(), faults in one 2 MiB-aligned THP through a write of
 * a known pattern, makes it lazyfree with MADV_FREE and reclaims it through
 * MADV_PAGEOUT (reclaim_pages() for the VM_LOCKED case, which MADV_PAGEOUT
 * refuses).  What happened is read off the page tables (PMD, PTE table or
 * nothing), the folio's flags, the mm's anon RSS and the pglazyfreed and
 * thp_split_pmd vm events, and the data is read back through the user
 * mapping.
 *
 * A clean lazyfree THP must be discarded whole, without a PMD split; that
 * is what the lazyfree-thp patch adds.  On a tree without it the "whole"
 * cases see the split and fail: patches/expected-before lists them.
 *
 * Two cases check that reclaim still does what 7.3 does where the discard
 * must not change it: an ordinary (swapbacked) THP goes to swap (the case
 * switches a swap device on), and a lazyfree THP that fork() shares with a
 * child is freed from both mms (the child's mm is kept after it exits).
 *
 * Cases skip when no THP could be faulted in (THP disabled at run time, or
 * no free 2 MiB block), or when no swap device can be had.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/swap.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "mm_kunit_helpers.h"
#include "mm_test_util.h"

#define THP_SIZE	HPAGE_PMD_SIZE
#define THP_NR		HPAGE_PMD_NR
#define CHUNK		PAGE_SIZE
#define NOT_REDIRTIED	ULONG_MAX

struct lazyfree_ctx {
	unsigned long addr;		/* user address of the THP */
	unsigned long *events;		/* vm events at snapshot */
	unsigned long rss;		/* anon RSS (pages) at snapshot */
	unsigned long redirtied;	/* offset of the rewritten chunk */
	u8 *buf;			/* one CHUNK of scratch */
};

/* Seeds of the first contents and of the rewrite: they differ at every byte */
enum { SEED_FIRST = 1, SEED_REDIRTY = 2 };

/* What @off should hold: the second pattern in the rewritten chunk. */
static u8 want_at(struct lazyfree_ctx *ctx, unsigned long off)
{
	bool redirtied = ctx->redirtied != NOT_REDIRTIED &&
			 off >= ctx->redirtied && off < ctx->redirtied + CHUNK;

	return mm_test_pattern(off, redirtied ? SEED_REDIRTY : SEED_FIRST);
}

static unsigned long anon_rss(void)
{
	return get_mm_counter_sum(current->mm, MM_ANONPAGES);
}

static void snapshot(struct lazyfree_ctx *ctx)
{
	all_vm_events(ctx->events);
	ctx->rss = anon_rss();
}

/* How much vm event @item moved since the last snapshot(). */
static long event_delta(struct lazyfree_ctx *ctx, enum vm_event_item item)
{
	unsigned long now[NR_VM_EVENT_ITEMS];

	all_vm_events(now);
	return (long)(now[item] - ctx->events[item]);
}

static int write_pattern(struct lazyfree_ctx *ctx, unsigned long start,
			 unsigned long len, u8 seed)
{
	unsigned long off, i;

	for (off = start; off < start + len; off += CHUNK) {
		for (i = 0; i < CHUNK; i++)
			ctx->buf[i] = mm_test_pattern(off + i, seed);
		if (copy_to_user((void __user *)(ctx->addr + off), ctx->buf, CHUNK))
			return -EFAULT;
	}
	return 0;
}

/*
 * Compare [@start, @start + @len) of the THP range with the pattern (@zero
 * false) or with zeros (@zero true); report the first mismatch with its
 * offset.
 */
static void expect_range(struct kunit *test, struct lazyfree_ctx *ctx,
			 unsigned long start, unsigned long len, bool zero)
{
	unsigned long off, i;

	for (off = start; off < start + len; off += CHUNK) {
		void __user *src = (void __user *)(ctx->addr + off);

		KUNIT_ASSERT_EQ_MSG(test, copy_from_user(ctx->buf, src, CHUNK), 0,
				    "read back faulted at offset %lu", off);
		for (i = 0; i < CHUNK; i++) {
			u8 want = zero ? 0 : want_at(ctx, off + i);

			if (ctx->buf[i] != want) {
				KUNIT_FAIL(test, "offset %lu: read 0x%02x, want 0x%02x",
					   off + i, ctx->buf[i], want);
				return;
			}
		}
	}
}

/* The whole THP range holds the pattern (@zero false) or zeros */
static void expect_contents(struct kunit *test, struct lazyfree_ctx *ctx,
			    bool zero)
{
	expect_range(test, ctx, 0, THP_SIZE, zero);
}

/*
 * The folio mapped at @addr with a reference held, or NULL when nothing is
 * mapped there.  GUP-fast only: it neither faults nor touches the entry.
 */
static struct folio *user_folio(unsigned long addr)
{
	struct page *page;

	if (!get_user_page_fast_only(addr, 0, &page))
		return NULL;
	return page_folio(page);
}

/* No page of the THP range is mapped (each looked up as GUP-fast would) */
static void expect_unmapped(struct kunit *test, struct lazyfree_ctx *ctx)
{
	struct folio *folio;
	unsigned long off;

	for (off = 0; off < THP_SIZE; off += PAGE_SIZE) {
		folio = user_folio(ctx->addr + off);
		if (folio) {
			folio_put(folio);
			KUNIT_FAIL(test, "a page is still mapped at offset %lu", off);
			return;
		}
	}
}

/*
 * Compact memory as a user does, by writing 1 to /proc/sys/vm/compact_memory
 * (on a proc mount of the case's own).  0, or a negative errno.
 */
static int compact_all_memory(struct kunit *test)
{
	struct vfsmount *mnt = mm_test_mount(test, "proc", NULL);
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = file_open_root_mnt(mnt, "sys/vm/compact_memory", O_WRONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, "1", 1, &pos);
	fput(f);
	return n == 1 ? 0 : n < 0 ? n : -EIO;
}

/* Is there a zone with a free 2 MiB to spare above its high watermark? */
static bool zone_with_room(void)
{
	struct zone *zone;

	for_each_populated_zone(zone)
		if (zone_page_state(zone, NR_FREE_PAGES) >
		    high_wmark_pages(zone) + 2 * THP_NR)
			return true;
	return false;
}

/*
 * Map 4 MiB, fault one 2 MiB-aligned THP in it with the pattern and put it
 * on the LRU.  @mmap_flags selects private anonymous or droppable memory.
 * Where the fault did not produce a PMD-mapped THP, memory is compacted
 * (frees that wait for a grace period, and earlier cases, can leave it
 * fragmented) and the range faulted again; if that still gives no THP
 * although a zone has room for one, the case fails: THP allocation is
 * broken.  It skips only when THP is off or no zone has the room.
 */
static void fault_thp(struct kunit *test, struct lazyfree_ctx *ctx,
		      unsigned long mmap_flags)
{
	unsigned long map;
	int ret;

	if (!hugepage_global_enabled())
		kunit_skip(test, "config: transparent_hugepage is never");
	map = kunit_vm_mmap(test, NULL, 0, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
			    mmap_flags, 0);
	KUNIT_ASSERT_NE_MSG(test, map, 0, "kunit_vm_mmap failed");
	KUNIT_ASSERT_LT_MSG(test, map, (unsigned long)TASK_SIZE,
			    "kunit_vm_mmap returned an error: %ld", (long)map);
	ctx->addr = ALIGN(map, THP_SIZE);
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, ctx->addr, THP_SIZE,
					 MADV_HUGEPAGE), 0);
	KUNIT_ASSERT_EQ(test, write_pattern(ctx, 0, THP_SIZE, SEED_FIRST), 0);
	if (mm_kunit_pmd_state(current->mm, ctx->addr) != MM_KUNIT_PMD_HUGE) {
		KUNIT_ASSERT_EQ(test, do_madvise(current->mm, ctx->addr,
						 THP_SIZE, MADV_DONTNEED), 0);
		if (!IS_ENABLED(CONFIG_COMPACTION))
			kunit_skip(test,
				   "config: CONFIG_COMPACTION=n and no free 2 MiB for the THP");
		ret = compact_all_memory(test);
		KUNIT_ASSERT_EQ_MSG(test, ret, 0,
				    "writing 1 to /proc/sys/vm/compact_memory");
		if (!zone_with_room())
			kunit_skip(test,
				   "machine: no zone with 2 MiB free above its high watermark, after compaction");
		KUNIT_ASSERT_EQ(test, write_pattern(ctx, 0, THP_SIZE, SEED_FIRST), 0);
		KUNIT_ASSERT_EQ_MSG(test, mm_kunit_pmd_state(current->mm, ctx->addr),
				    MM_KUNIT_PMD_HUGE,
				    "no PMD-mapped THP after compaction, with a zone that has room for one");
	}
	/* Newly faulted folios sit in per-CPU batches until drained. */
	lru_add_drain_all();
}

/* MADV_FREE the THP and check that it became lazyfree and stayed whole. */
static void make_lazyfree(struct kunit *test, struct lazyfree_ctx *ctx)
{
	struct folio *folio;
	bool lazyfree;

	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, ctx->addr, THP_SIZE,
					 MADV_FREE), 0);
	/* folio_mark_lazyfree() moves the folio through a per-CPU batch. */
	lru_add_drain_all();
	folio = mm_kunit_pmd_folio(current->mm, ctx->addr);
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "MADV_FREE lost the PMD mapping");
	lazyfree = folio_test_lazyfree(folio);
	folio_put(folio);
	KUNIT_ASSERT_TRUE_MSG(test, lazyfree,
			      "MADV_FREE did not make the THP lazyfree");
}

static void pageout(struct kunit *test, struct lazyfree_ctx *ctx)
{
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, ctx->addr, THP_SIZE,
					 MADV_PAGEOUT), 0);
}

/* The THP survived reclaim: still PMD-mapped, no split, nothing freed. */
static void expect_kept_whole(struct kunit *test, struct lazyfree_ctx *ctx)
{
	KUNIT_EXPECT_EQ_MSG(test, mm_kunit_pmd_state(current->mm, ctx->addr), MM_KUNIT_PMD_HUGE,
			    "the THP lost its PMD mapping");
	KUNIT_EXPECT_EQ(test, event_delta(ctx, THP_SPLIT_PMD), 0);
	KUNIT_EXPECT_EQ(test, event_delta(ctx, PGLAZYFREED), 0);
	KUNIT_EXPECT_EQ(test, anon_rss(), ctx->rss);
}

/* The THP was unmapped in one piece: no split, no page table left. */
static void expect_unmapped_whole(struct kunit *test, struct lazyfree_ctx *ctx)
{
	KUNIT_EXPECT_EQ_MSG(test, event_delta(ctx, THP_SPLIT_PMD), 0,
			    "the PMD was split before the discard");
	KUNIT_EXPECT_EQ_MSG(test, mm_kunit_pmd_state(current->mm, ctx->addr), MM_KUNIT_PMD_NONE,
			    "a mapping or page table is left at the THP's address");
	KUNIT_EXPECT_EQ_MSG(test, ctx->rss - anon_rss(), (unsigned long)THP_NR,
			    "anon RSS did not drop by 2 MiB");
	/* Measured before this read: it may fault a zero page back in. */
	expect_contents(test, ctx, true);
}

/* A clean lazyfree THP is discarded whole, without splitting its PMD. */
static void lazyfree_thp_clean_discarded_whole(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	make_lazyfree(test, ctx);
	snapshot(ctx);
	pageout(test, ctx);
	KUNIT_EXPECT_EQ_MSG(test, event_delta(ctx, PGLAZYFREED), THP_NR,
			    "the folio was not freed as one lazyfree THP");
	expect_unmapped_whole(test, ctx);
}

/*
 * Written after MADV_FREE (dirty PMD): reclaim keeps the THP, PMD-mapped,
 * with the new data, and the folio is swapbacked again.
 */
static void lazyfree_thp_redirtied_kept(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;
	struct folio *folio;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	make_lazyfree(test, ctx);
	/*
	 * Rewrite one page in the middle with other bytes: the read-back
	 * tells the new data from the old and from zeroes.
	 */
	ctx->redirtied = THP_SIZE / 2;
	KUNIT_ASSERT_EQ(test, write_pattern(ctx, ctx->redirtied, CHUNK,
					    SEED_REDIRTY), 0);
	snapshot(ctx);
	pageout(test, ctx);
	expect_kept_whole(test, ctx);
	folio = mm_kunit_pmd_folio(current->mm, ctx->addr);
	if (folio) {
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_swapbacked(folio),
				      "a redirtied lazyfree THP must be swapbacked again");
		folio_put(folio);
	}
	expect_contents(test, ctx, false);
}

/*
 * A lazyfree THP whose folio is dirty while its PMD is clean (written
 * through a pin: unpinning marks the folio dirty, not the PMD): reclaim
 * keeps it PMD-mapped, swapbacked again, with its data.
 */
static void lazyfree_thp_dirty_folio_clean_pmd_kept(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;
	struct mm_struct *mm;
	struct folio *folio;
	bool pmd_clean, dirty, lazyfree, swapbacked;
	pmd_t *pmdp;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	make_lazyfree(test, ctx);
	mm = current->mm;
	/*
	 * What unpin_user_pages_dirty_lock() does when a pin that was
	 * written through is dropped: the folio is marked dirty under its
	 * lock, the PMD stays as MADV_FREE left it, clean.
	 */
	folio = mm_kunit_pmd_folio(mm, ctx->addr);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_lock(folio);
	folio_mark_dirty(folio);
	folio_unlock(folio);
	dirty = folio_test_dirty(folio);
	lazyfree = folio_test_lazyfree(folio);
	folio_put(folio);
	mmap_read_lock(mm);
	pmdp = mm_kunit_user_pmd(mm, ctx->addr);
	pmd_clean = pmdp && !pmd_dirty(pmdp_get_lockless(pmdp));
	mmap_read_unlock(mm);
	KUNIT_ASSERT_TRUE_MSG(test, dirty, "folio_mark_dirty() left the folio clean");
	KUNIT_ASSERT_TRUE_MSG(test, lazyfree, "marking the folio dirty made it swapbacked");
	KUNIT_ASSERT_TRUE_MSG(test, pmd_clean, "the PMD is dirty: the case needs it clean");

	snapshot(ctx);
	pageout(test, ctx);
	expect_kept_whole(test, ctx);
	folio = mm_kunit_pmd_folio(mm, ctx->addr);
	if (folio) {
		swapbacked = folio_test_swapbacked(folio);
		folio_put(folio);
		KUNIT_EXPECT_TRUE_MSG(test, swapbacked,
				      "a lazyfree THP with a dirty folio must be swapbacked again");
	}
	expect_contents(test, ctx, false);
}

KUNIT_DEFINE_ACTION_WRAPPER(unpin_action, unpin_user_page, struct page *);

enum extra_ref { EXTRA_PIN, EXTRA_FOLIO_REF };

static const enum extra_ref extra_refs[] = { EXTRA_PIN, EXTRA_FOLIO_REF };

static void extra_ref_desc(const enum extra_ref *r, char *desc)
{
	strscpy(desc, *r == EXTRA_PIN ? "gup-pin" : "folio-ref", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(extra_ref, extra_refs, extra_ref_desc);

/*
 * A clean lazyfree THP with an extra reference (a GUP pin, or a plain
 * folio reference): the discard is refused, the PMD is put back, the data
 * stays and the folio is still lazyfree.
 */
static void lazyfree_thp_extra_ref_kept(struct kunit *test)
{
	const enum extra_ref *kind = test->param_value;
	struct lazyfree_ctx *ctx = test->priv;
	struct page *pinned = NULL;
	struct folio *held = NULL, *folio;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	make_lazyfree(test, ctx);
	/* Released by an action if an assertion ends the case first */
	if (*kind == EXTRA_PIN) {
		KUNIT_ASSERT_EQ(test, pin_user_pages_fast(ctx->addr, 1, 0, &pinned), 1);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unpin_action,
								pinned), 0);
	} else {
		held = mm_kunit_pmd_folio(current->mm, ctx->addr);
		KUNIT_ASSERT_NOT_NULL(test, held);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_folio_put,
								held), 0);
	}
	snapshot(ctx);
	pageout(test, ctx);
	expect_kept_whole(test, ctx);
	folio = mm_kunit_pmd_folio(current->mm, ctx->addr);
	if (folio) {
		KUNIT_EXPECT_TRUE(test, folio_test_lazyfree(folio));
		folio_put(folio);
	}
	if (pinned)
		kunit_release_action(test, unpin_action, pinned);
	if (held)
		kunit_release_action(test, mm_test_folio_put, held);
	expect_contents(test, ctx, false);
}

/*
 * Lock the mapping as mlock_fixup() does before its page walk: VM_LOCKED
 * on the VMA and locked_vm accounted, the folio not mlocked yet.  A
 * built-in test cannot call mlock() itself: mlock_fixup() is static.
 */
static void lock_mapping(struct kunit *test, struct lazyfree_ctx *ctx)
{
	struct mm_struct *mm = current->mm;	/* attached by kunit_vm_mmap() */
	struct vm_area_struct *vma;

	mmap_write_lock(mm);
	vma = vma_lookup(mm, ctx->addr);
	if (vma) {
		vma_start_write(vma);
		vm_flags_set(vma, VM_LOCKED);
		mm->locked_vm += vma_pages(vma);
	}
	mmap_write_unlock(mm);
	KUNIT_ASSERT_NOT_NULL(test, vma);
}

/* Hand the PMD-mapped folio to reclaim_pages(), as MADV_PAGEOUT would. */
static void reclaim_folio(struct kunit *test, struct lazyfree_ctx *ctx)
{
	struct folio *folio = mm_kunit_pmd_folio(current->mm, ctx->addr);
	LIST_HEAD(list);
	bool isolated;

	KUNIT_ASSERT_NOT_NULL(test, folio);
	isolated = folio_isolate_lru(folio);
	folio_put(folio);	/* the isolation holds its own reference */
	KUNIT_ASSERT_TRUE(test, isolated);
	list_add(&folio->lru, &list);
	snapshot(ctx);
	reclaim_pages(&list);
}

/* The PMD-mapped folio is mlocked. */
static void expect_mlocked(struct kunit *test, struct lazyfree_ctx *ctx)
{
	struct folio *folio = mm_kunit_pmd_folio(current->mm, ctx->addr);

	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_mlocked(folio),
			      "the folio of a VM_LOCKED range is not mlocked");
	folio_put(folio);
}

/*
 * The window of mlock() before its page walk (or a fault racing it): the
 * VMA is VM_LOCKED, the folio not yet mlocked, so reclaim reaches the rmap
 * walk.  try_to_unmap_one() must keep the THP whole and mlock it rather
 * than discard it.
 */
static void lazyfree_thp_vm_locked_kept(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	make_lazyfree(test, ctx);
	lock_mapping(test, ctx);
	reclaim_folio(test, ctx);
	expect_kept_whole(test, ctx);
	expect_mlocked(test, ctx);
	expect_contents(test, ctx, false);
}

/*
 * A lazyfree THP whose PMD was split before reclaim (PTE-mapped, the folio
 * still of PMD order right before reclaim) is reclaimed through the PTE
 * path: the one large folio is freed, all 512 pages, none left mapped.
 */
static void lazyfree_thp_pte_mapped_reclaimed(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;
	struct vm_area_struct *vma;
	struct mm_struct *mm;
	struct folio *folio;
	bool lazyfree;
	int order;
	pmd_t *pmdp;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	mm = current->mm;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, ctx->addr);
	pmdp = mm_kunit_user_pmd(mm, ctx->addr);
	if (vma && pmdp)
		split_huge_pmd(vma, pmdp, ctx->addr);
	mmap_read_unlock(mm);
	KUNIT_ASSERT_EQ_MSG(test, mm_kunit_pmd_state(mm, ctx->addr), MM_KUNIT_PMD_TABLE,
			    "could not split the PMD");

	KUNIT_ASSERT_EQ(test, do_madvise(mm, ctx->addr, THP_SIZE, MADV_FREE), 0);
	lru_add_drain_all();
	/* Right before reclaim: one lazyfree folio of PMD order, PTE-mapped */
	folio = user_folio(ctx->addr);
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "nothing mapped after MADV_FREE");
	order = folio_order(folio);
	lazyfree = folio_test_lazyfree(folio);
	folio_put(folio);
	KUNIT_EXPECT_EQ_MSG(test, order, HPAGE_PMD_ORDER,
			    "the folio is not of PMD order after the PMD split and MADV_FREE");
	KUNIT_ASSERT_TRUE_MSG(test, lazyfree,
			      "MADV_FREE did not make the PTE-mapped THP lazyfree");

	snapshot(ctx);
	pageout(test, ctx);
	KUNIT_EXPECT_EQ_MSG(test, event_delta(ctx, PGLAZYFREED), THP_NR,
			    "not all 512 pages of the folio were freed as lazyfree");
	KUNIT_EXPECT_EQ_MSG(test, ctx->rss - anon_rss(), (unsigned long)THP_NR,
			    "anon RSS did not drop by 2 MiB");
	expect_unmapped(test, ctx);
	expect_contents(test, ctx, true);
}

/*
 * MADV_FREE on the first half of a THP only splits it (the PMD and the
 * folio: madvise_free_huge_pmd() splits a folio the range covers in
 * part) and makes every page of that half lazyfree, and none of the
 * other half.  Reclaim of the whole range then frees the madvised half:
 * exactly its pages counted as pglazyfreed, none of them mapped any
 * more, anon RSS down by at least that half, the half reading as zeroes;
 * and the other half keeps its data.  Without swap (the guest has none)
 * the other half stays mapped too.
 */
static void lazyfree_thp_half_madvised_rest_kept(struct kunit *test)
{
	const unsigned long half = THP_SIZE / 2;
	const long half_nr = THP_NR / 2;
	struct lazyfree_ctx *ctx = test->priv;
	struct folio *folio;
	unsigned long off;
	bool lazyfree, madvised;
	long freed, dropped;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, ctx->addr, half, MADV_FREE), 0);
	lru_add_drain_all();
	for (off = 0; off < THP_SIZE; off += PAGE_SIZE) {
		folio = user_folio(ctx->addr + off);
		KUNIT_ASSERT_NOT_NULL_MSG(test, folio,
					  "offset %lu is not mapped after MADV_FREE", off);
		lazyfree = folio_test_lazyfree(folio) && !folio_test_large(folio);
		folio_put(folio);
		madvised = off < half;
		if (lazyfree != madvised) {
			KUNIT_FAIL(test, "offset %lu, %s, is %s",
				   off, madvised ? "madvised" : "not madvised",
				   lazyfree ? "a lazyfree small folio" :
					      "not a lazyfree small folio");
			break;
		}
	}

	snapshot(ctx);
	pageout(test, ctx);
	freed = event_delta(ctx, PGLAZYFREED);
	dropped = (long)(ctx->rss - anon_rss());
	KUNIT_EXPECT_EQ_MSG(test, freed, half_nr,
			    "pages freed as lazyfree: the madvised half has %ld",
			    half_nr);
	KUNIT_EXPECT_GE_MSG(test, dropped, half_nr,
			    "anon RSS dropped by less than the madvised half");
	for (off = 0; off < half; off += PAGE_SIZE) {
		folio = user_folio(ctx->addr + off);
		if (folio) {
			folio_put(folio);
			KUNIT_FAIL(test,
				   "offset %lu, madvised and clean, is still mapped after reclaim",
				   off);
			break;
		}
	}
	/* Measured before these reads: they may fault zero pages in. */
	expect_range(test, ctx, half, half, false);
	expect_range(test, ctx, 0, half, true);
}

/*
 * A THP in a MAP_DROPPABLE mapping is lazyfree from birth and may be
 * dropped even when dirty: reclaim unmaps it whole, without a split.
 * pglazyfreed is not checked: 7.3's shrink_folio_list() keeps a dirty
 * unmapped lazyfree folio (it activates it as a dirty file-LRU folio),
 * with or without the series.
 */
static void lazyfree_thp_droppable_dirty_discarded(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;
	struct folio *folio;
	bool lazyfree;

	if (!IS_ENABLED(CONFIG_64BIT))
		kunit_skip(test, "config: CONFIG_64BIT=n: MAP_DROPPABLE needs a 64-bit kernel");
	fault_thp(test, ctx, MAP_DROPPABLE | MAP_ANONYMOUS);
	folio = mm_kunit_pmd_folio(current->mm, ctx->addr);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	lazyfree = folio_test_lazyfree(folio);
	folio_put(folio);
	KUNIT_ASSERT_TRUE_MSG(test, lazyfree,
			      "a droppable THP should not be swapbacked");
	snapshot(ctx);
	pageout(test, ctx);
	expect_unmapped_whole(test, ctx);
}

/*
 * An ordinary anon THP (written, never MADV_FREEd: swapbacked, not
 * lazyfree) is paged out by MADV_PAGEOUT while swap is on, as on 7.3: it
 * goes to swap whole (thp_swpout), none of its pages stays mapped, the
 * mm's anon RSS turns into swap entries, and reading the range swaps the
 * bytes written back in.  The lazyfree discard must leave such a folio to
 * the split and the swap path.
 */
static void lazyfree_thp_swapbacked_swapped_out(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;
	unsigned long swapents;
	struct folio *folio;
	bool lazyfree;

	mm_kunit_need_swap(test);
	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	folio = mm_kunit_pmd_folio(current->mm, ctx->addr);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	lazyfree = folio_test_lazyfree(folio);
	folio_put(folio);
	KUNIT_ASSERT_FALSE_MSG(test, lazyfree, "a THP written and not madvised is lazyfree");

	swapents = get_mm_counter_sum(current->mm, MM_SWAPENTS);
	snapshot(ctx);
	pageout(test, ctx);
	KUNIT_EXPECT_EQ_MSG(test, ctx->rss - anon_rss(), (unsigned long)THP_NR,
			    "anon RSS did not drop by 2 MiB: the THP is still mapped");
	KUNIT_EXPECT_EQ_MSG(test, get_mm_counter_sum(current->mm, MM_SWAPENTS) - swapents,
			    (unsigned long)THP_NR,
			    "the range does not hold 512 swap entries");
	KUNIT_EXPECT_GE_MSG(test, event_delta(ctx, PSWPOUT), (long)THP_NR,
			    "fewer than 512 pages were written to swap");
	/* A fresh swap device has room for it: the folio reached the unmap whole */
	if (IS_ENABLED(CONFIG_THP_SWAP))
		KUNIT_EXPECT_EQ_MSG(test, event_delta(ctx, THP_SWPOUT), 1,
				    "the THP was not swapped out whole (thp_swpout_fallback +%ld)",
				    event_delta(ctx, THP_SWPOUT_FALLBACK));
	expect_unmapped(test, ctx);
	/* Measured before this read, which swaps the pages back in */
	expect_contents(test, ctx, false);
}

KUNIT_DEFINE_ACTION_WRAPPER(mmput_action, mmput, struct mm_struct *);

/* The child of fork_mm(): keep its mm, which fork() copied, and exit. */
static int keep_mm_and_exit(void *arg)
{
	struct mm_struct **mmp = arg;

	mmget(current->mm);
	*mmp = current->mm;
	do_exit(0);
}

/**
 * fork_mm - fork() the case's thread and keep the child's mm
 * @test: the case; the mm is released when it ends
 *
 * The child is a task as fork() makes one (no CLONE_VM): its mm is a copy
 * of the case's, an anon THP's PMD shared with it by copy_huge_pmd() as
 * for any fork().  The child takes a reference on that mm and exits;
 * CLONE_VFORK has this wait until it did.  Its exit signal is SIGCHLD,
 * which a kthread ignores: it is reaped at once.
 *
 * Return: the child's mm, or an ERR_PTR().
 */
static struct mm_struct *fork_mm(struct kunit *test)
{
	struct mm_struct **mmp = kunit_kzalloc(test, sizeof(*mmp), GFP_KERNEL);
	struct kernel_clone_args args = {
		.flags		= CLONE_VFORK | CLONE_UNTRACED,
		.exit_signal	= SIGCHLD,
		.fn		= keep_mm_and_exit,
		.fn_arg		= mmp,
	};
	pid_t pid;
	int ret;

	if (!mmp)
		return ERR_PTR(-ENOMEM);
	pid = kernel_clone(&args);
	if (pid < 0)
		return ERR_PTR(pid);
	if (!*mmp)
		return ERR_PTR(-ESRCH);
	ret = kunit_add_action_or_reset(test, mmput_action, *mmp);
	return ret ? ERR_PTR(ret) : *mmp;
}

/* The THP range of @mm, not the case's, reads as zeroes (access_remote_vm()) */
static void expect_remote_zero(struct kunit *test, struct lazyfree_ctx *ctx,
			       struct mm_struct *mm)
{
	unsigned long off, i;

	for (off = 0; off < THP_SIZE; off += CHUNK) {
		KUNIT_ASSERT_EQ_MSG(test, access_remote_vm(mm, ctx->addr + off, ctx->buf,
							   CHUNK, 0), CHUNK,
				    "child: reading offset %lu failed", off);
		for (i = 0; i < CHUNK; i++) {
			if (ctx->buf[i]) {
				KUNIT_FAIL(test, "child: offset %lu: read 0x%02x, want 0",
					   off + i, ctx->buf[i]);
				return;
			}
		}
	}
}

/*
 * A clean lazyfree THP that a fork() after MADV_FREE shares with a child
 * (one PMD in each mm) is freed by one reclaim of the folio, as on 7.3:
 * unmapped from both mms (each one's anon RSS down by 2 MiB), +512
 * pglazyfreed, both read as zeroes.  MADV_PAGEOUT leaves a shared folio
 * alone; kswapd does not: reclaim_pages() stands for it here.
 */
static void lazyfree_thp_forked_discarded_from_both(struct kunit *test)
{
	struct lazyfree_ctx *ctx = test->priv;
	struct mm_struct *child;
	unsigned long child_rss;
	struct folio *folio;
	bool lazyfree;
	int mapcount;

	fault_thp(test, ctx, MAP_PRIVATE | MAP_ANONYMOUS);
	make_lazyfree(test, ctx);
	child = fork_mm(test);
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, child, "fork: %ld", PTR_ERR(child));
	/* Right before reclaim: one lazyfree folio, PMD-mapped in both mms */
	KUNIT_ASSERT_EQ_MSG(test, mm_kunit_pmd_state(child, ctx->addr), MM_KUNIT_PMD_HUGE,
			    "the child does not map the THP with a PMD");
	folio = mm_kunit_pmd_folio(current->mm, ctx->addr);
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "fork() lost the parent's PMD mapping");
	mapcount = folio_mapcount(folio);
	lazyfree = folio_test_lazyfree(folio);
	folio_put(folio);
	KUNIT_ASSERT_EQ_MSG(test, mapcount, 2, "the THP is not mapped by parent and child");
	KUNIT_ASSERT_TRUE_MSG(test, lazyfree, "fork() made the THP swapbacked");
	child_rss = get_mm_counter_sum(child, MM_ANONPAGES);
	KUNIT_ASSERT_GE(test, child_rss, (unsigned long)THP_NR);

	reclaim_folio(test, ctx);
	KUNIT_EXPECT_EQ_MSG(test, event_delta(ctx, PGLAZYFREED), THP_NR,
			    "the folio was not freed as one lazyfree THP");
	KUNIT_EXPECT_EQ_MSG(test, ctx->rss - anon_rss(), (unsigned long)THP_NR,
			    "parent: anon RSS did not drop by 2 MiB");
	KUNIT_EXPECT_EQ_MSG(test, child_rss - get_mm_counter_sum(child, MM_ANONPAGES),
			    (unsigned long)THP_NR,
			    "child: anon RSS did not drop by 2 MiB");
	/* Measured before these reads: they may fault zero pages in */
	expect_contents(test, ctx, true);
	expect_remote_zero(test, ctx, child);
}

static int lazyfree_thp_test_init(struct kunit *test)
{
	struct lazyfree_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->events = kunit_kcalloc(test, NR_VM_EVENT_ITEMS, sizeof(unsigned long),
				    GFP_KERNEL);
	ctx->buf = kunit_kzalloc(test, CHUNK, GFP_KERNEL);
	if (!ctx->events || !ctx->buf)
		return -ENOMEM;
	ctx->redirtied = NOT_REDIRTIED;
	test->priv = ctx;
	return 0;
}

static struct kunit_case lazyfree_thp_test_cases[] = {
	KUNIT_CASE(lazyfree_thp_clean_discarded_whole),
	KUNIT_CASE(lazyfree_thp_redirtied_kept),
	KUNIT_CASE(lazyfree_thp_dirty_folio_clean_pmd_kept),
	KUNIT_CASE_PARAM(lazyfree_thp_extra_ref_kept, extra_ref_gen_params),
	KUNIT_CASE(lazyfree_thp_vm_locked_kept),
	KUNIT_CASE(lazyfree_thp_pte_mapped_reclaimed),
	KUNIT_CASE(lazyfree_thp_half_madvised_rest_kept),
	KUNIT_CASE(lazyfree_thp_droppable_dirty_discarded),
	KUNIT_CASE(lazyfree_thp_swapbacked_swapped_out),
	KUNIT_CASE(lazyfree_thp_forked_discarded_from_both),
	{}
};

static struct kunit_suite lazyfree_thp_test_suite = {
	.name = "lazyfree_thp",
	.init = lazyfree_thp_test_init,
	.test_cases = lazyfree_thp_test_cases,
};

kunit_test_suite(lazyfree_thp_test_suite);

MODULE_DESCRIPTION("KUnit tests for reclaim of lazyfree PMD-mapped THPs");
MODULE_LICENSE("GPL");
