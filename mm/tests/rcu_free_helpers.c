// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the rcu_free_* suites (rcu_free_helpers.h says what each
 * does): built once when CONFIG_RCU_FREE_KUNIT_TEST is.
 */

#include <kunit/test.h>
#include <linux/compaction.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/stacktrace.h>
#include <linux/swap.h>
#include <linux/string.h>
#include <linux/vmstat.h>

#include "rcu_free_helpers.h"

/* Pages a case can watch: ZONE_DMA whole, and a pile-up on top */
#define RFK_MAX_WATCH	(RFK_DMA_MAX_PAGES + 2048)

void rfk_require_expedite(struct kunit *test)
{
	if (!RFK_HAVE_EXPEDITE)
		kunit_skip(test,
			   "not applied: the expedite (no RCU_FREE_EXPEDITE_PAGES in mm/page_alloc.h)");
}

void rfk_require_drain_bound(struct kunit *test)
{
	if (!RFK_HAVE_MAX_DRAINS)
		kunit_skip(test,
			   "not applied: the drain before OOM (no RCU_FREE_MAX_DRAINS in mm/page_alloc.h)");
}

void rfk_require_sync(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_SYNC))
		kunit_skip(test, "not applied: no rcu_free_sync() in mm/page_alloc.h");
}

int rfk_zone_item(const char *name)
{
	int i;

	for (i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
		if (!strcmp(zone_stat_name(i), name))
			return i;
	return -1;
}

long rfk_zone_stat_settle(struct zone *zone, int item, long want)
{
	unsigned long deadline = jiffies + HZ;
	long sum;

	while ((sum = zone ? zone_page_state_snapshot(zone, item) :
			     zone_stat_sum(item)) != want &&
	       time_before(jiffies, deadline))
		usleep_range(100, 200);
	return sum;
}

/*
 * Wait until nothing waits for a grace period: what earlier cases (or
 * their files, closed after their exits) left.  By the hook where it is
 * there; else by polling nr_free_rcu, 10 s at most.
 */
static void rfk_wait_idle(struct kunit *test)
{
	unsigned long deadline = jiffies + 10 * HZ;
	int item = rfk_zone_item("nr_free_rcu");

	if (MM_HOOK(RCU_FREE_HOLD)) {
		rcu_free_wait_grace();
		return;
	}
	if (item < 0)
		return;
	while (zone_stat_sum(item) && time_before(jiffies, deadline)) {
		rcu_barrier();
		usleep_range(100, 200);
	}
	if (zone_stat_sum(item))
		kunit_info(test, "%ld pages still waiting after 10 s",
			   zone_stat_sum(item));
}

static void rfk_kvfree(void *p)
{
	kvfree(p);
}

int rfk_init(struct kunit *test)
{
	struct rfk_ctx *ctx;

	if (!IS_ENABLED(CONFIG_PAGE_RCU_FREE)) {
		/* What our patch 1's CONFIG_PAGE_RCU_FREE depends on */
		if (!IS_ENABLED(CONFIG_64BIT) || IS_ENABLED(CONFIG_PREEMPT_RT))
			kunit_skip(test,
				   "config: CONFIG_PAGE_RCU_FREE needs CONFIG_64BIT and no CONFIG_PREEMPT_RT");
		kunit_skip(test, "not applied: rcu-free (no CONFIG_PAGE_RCU_FREE in this kernel)");
	}

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->watch = kvcalloc(RFK_MAX_WATCH, sizeof(*ctx->watch), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->watch);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rfk_kvfree,
							ctx->watch), 0);
	rfk_wait_idle(test);
#ifdef RCU_FREE_SYNC_INTERVAL
	/*
	 * Range allocation and compaction expedite the grace period of a
	 * drain at most once every RCU_FREE_SYNC_INTERVAL: start each case
	 * with that turn free, whatever the case before did (a condition on
	 * the clock, which this wait meets).
	 */
	schedule_timeout_uninterruptible(RCU_FREE_SYNC_INTERVAL + 2);
#endif
	if (MM_HOOK(RCU_FREE_NR_EARLY))
		ctx->early0 = rcu_free_nr_early();
	test->priv = ctx;
	return 0;
}

void rfk_exit(struct kunit *test)
{
	struct rfk_ctx *ctx = test->priv;

	if (!ctx)
		return;
	/* The grace period for what the case left waiting (held or not) */
	rfk_release(test);
	rfk_wait_watched(test, "the grace-period work, after the case");
	/* A case skipped whole checked nothing: no part to report either */
	if (test->status == KUNIT_SKIPPED)
		return;
	if (mm_hook(test, RCU_FREE_NR_EARLY,
		    "the count of pages handed back early")) {
		if (MM_HOOK(RCU_FREE_HOLD))
			rcu_free_wait_grace();
		KUNIT_EXPECT_EQ_MSG(test, rcu_free_nr_early() - ctx->early0, 0,
				    "pages freed before their grace period ended");
	}
}

void rfk_watch(struct kunit *test, struct page *page)
{
	struct rfk_ctx *ctx = rfk_ctx(test);
	struct rfk_watch *w;

	if (ctx->nr_watch == RFK_MAX_WATCH) {
		KUNIT_FAIL(test, "more than %d pages to watch", RFK_MAX_WATCH);
		return;
	}
	w = &ctx->watch[ctx->nr_watch];
	w->page = page;
	get_state_synchronize_rcu_full(&w->gp);
	/* Published before the put: an rfk_span reads the entry then */
	smp_store_release(&ctx->nr_watch, ctx->nr_watch + 1);
}

void rfk_put_flagged(struct kunit *test, struct page *page)
{
	folio_set_rcu_free(page_folio(page));
	rfk_watch(test, page);
	put_page(page);
}

/*
 * While the hold is on nothing moves the lists by itself: after the path
 * under test, the lists' counters (rcu_free_nr_queued()) and nr_free_rcu
 * must equal the pages on them (rcu_free_nr_listed()).  A free on another
 * CPU can land between the reads: the three are read again, 10 times at
 * most, before a difference counts.
 */
static void rfk_check_lists(struct kunit *test, const char *path)
{
	int item = rfk_zone_item("nr_free_rcu");
	unsigned long listed, queued;
	long waiting;
	int tries;

	if (!MM_HOOK(RCU_FREE_HOLD) || !rfk_ctx(test)->held || item < 0)
		return;
	for (tries = 0; tries < 10; tries++) {
		listed = rcu_free_nr_listed();
		queued = rcu_free_nr_queued();
		waiting = zone_stat_sum(item);
		if (queued == listed && waiting == (long)listed)
			return;
		usleep_range(100, 200);
	}
	KUNIT_EXPECT_EQ_MSG(test, queued, listed,
			    "after %s: the lists' counters say %lu pages, the lists hold %lu",
			    path, queued, listed);
	KUNIT_EXPECT_EQ_MSG(test, waiting, (long)listed,
			    "after %s: nr_free_rcu is %ld, the lists hold %lu",
			    path, waiting, listed);
}

unsigned int rfk_check_freed(struct kunit *test, const char *path)
{
	struct rfk_ctx *ctx = rfk_ctx(test);
	unsigned int i, seen = 0, early = 0;
	unsigned long first = 0;
	struct rfk_watch *w;

	for (i = 0; i < ctx->nr_watch; i++) {
		w = &ctx->watch[i];
		if (w->seen || folio_test_rcu_free(page_folio(w->page)))
			continue;
		w->seen = true;
		seen++;
		if ((w->marked || !poll_state_synchronize_rcu_full(&w->gp)) &&
		    !early++)
			first = page_to_pfn(w->page);
	}
	ctx->nr_seen += seen;
	if (early)
		KUNIT_FAIL(test,
			   "%s handed back %u of %u pages (first pfn %#lx) before a grace period since their last put had ended",
			   path, early, seen, first);
	rfk_check_lists(test, path);
	return seen;
}

unsigned int rfk_look_freed(struct kunit *test)
{
	struct rfk_ctx *ctx = rfk_ctx(test);
	unsigned int i, back = 0;
	struct rfk_watch *w;

	for (i = 0; i < ctx->nr_watch; i++) {
		w = &ctx->watch[i];
		if (w->seen || folio_test_rcu_free(page_folio(w->page)))
			continue;
		back++;
		if (!poll_state_synchronize_rcu_full(&w->gp))
			w->marked = true;
	}
	return back;
}

void rfk_unwatch_all(struct kunit *test)
{
	struct rfk_ctx *ctx = rfk_ctx(test);
	unsigned int i;

	for (i = 0; i < ctx->nr_watch; i++)
		ctx->watch[i].seen = true;
	ctx->nr_seen = ctx->nr_watch;
}

unsigned int rfk_nr_unseen(struct kunit *test)
{
	return rfk_ctx(test)->nr_watch - rfk_ctx(test)->nr_seen;
}

bool rfk_wait_watched(struct kunit *test, const char *path)
{
	unsigned long deadline = jiffies + 10 * HZ;

	for (;;) {
		rfk_check_freed(test, path);
		if (!rfk_nr_unseen(test))
			return true;
		if (time_after(jiffies, deadline))
			break;
		usleep_range(50, 100);
	}
	KUNIT_FAIL(test, "%u of %u pages freed with PG_rcu_free still wait after 10 s",
		   rfk_nr_unseen(test), rfk_ctx(test)->nr_watch);
	return false;
}

struct rfk_span {
	struct rfk_ctx *ctx;
	struct task_struct *task;
	struct completion go, done;
	/* The first watched page whose put is inside the reader */
	unsigned int start;
	bool inside, stop;
};

/* Mark the pages put inside the span that are back already */
static void rfk_span_look(struct rfk_span *span)
{
	struct rfk_watch *w;
	unsigned int i, nr;

	/* Pairs with rfk_watch(): the entries below nr are filled in */
	nr = smp_load_acquire(&span->ctx->nr_watch);
	for (i = span->start; i < nr; i++) {
		w = &span->ctx->watch[i];
		if (!w->early && !folio_test_rcu_free(page_folio(w->page)))
			WRITE_ONCE(w->early, true);
	}
}

static int rfk_span_fn(void *data)
{
	struct rfk_span *span = data;
	bool stop;

	wait_for_completion(&span->go);
	rcu_read_lock();
	/* The reader is on before the entries it looks at are published */
	smp_mb();
	/* Pairs with rfk_watch(): pages watched from here on are put later */
	span->start = smp_load_acquire(&span->ctx->nr_watch);
	/* Pairs with rfk_span_enter(): the caller puts only after this */
	smp_store_release(&span->inside, true);
	do {
		/* Pairs with rfk_span_end(): what the case saw, seen here */
		stop = smp_load_acquire(&span->stop);
		/* A free seen by the case before it ended the span */
		smp_rmb();
		rfk_span_look(span);
		cpu_relax();
	} while (!stop);
	rcu_read_unlock();
	kthread_complete_and_exit(&span->done, 0);
}

struct rfk_span *rfk_span_prepare(struct kunit *test)
{
	struct rfk_span *span;

	/* Not a kunit allocation: a hung span is left behind, not freed */
	span = kzalloc_obj(*span);
	if (!span)
		return NULL;
	span->ctx = rfk_ctx(test);
	init_completion(&span->go);
	init_completion(&span->done);
	span->task = rfk_other_cpu_thread(rfk_span_fn, span, "rfk_span");
	if (IS_ERR(span->task)) {
		kfree(span);
		return NULL;
	}
	wake_up_process(span->task);
	return span;
}

bool rfk_span_enter(struct rfk_span *span)
{
	/* A hang guard: the thread only has to wake up */
	unsigned long deadline = jiffies + 10 * HZ;

	complete(&span->go);
	/* Pairs with rfk_span_fn(): the reader is on once this is seen */
	while (!smp_load_acquire(&span->inside)) {
		if (time_after(jiffies, deadline))
			return false;
		cpu_relax();
	}
	return true;
}

unsigned int rfk_span_end(struct kunit *test, struct rfk_span *span,
			  const char *path)
{
	struct rfk_ctx *ctx = rfk_ctx(test);
	unsigned int i, early = 0;
	unsigned long first = 0;

	/* What the case saw before this is seen by the span's last look */
	smp_mb();
	/* Pairs with rfk_span_fn(): its last look comes after this */
	smp_store_release(&span->stop, true);
	complete(&span->go);
	if (!wait_for_completion_timeout(&span->done, 30 * HZ)) {
		KUNIT_FAIL(test, "the span's reader hung (30 s)");
		return 0;
	}
	for (i = span->start; i < ctx->nr_watch; i++) {
		if (!ctx->watch[i].early)
			continue;
		if (!early++)
			first = page_to_pfn(ctx->watch[i].page);
	}
	if (early)
		KUNIT_FAIL(test,
			   "%s handed back %u pages (first pfn %#lx) inside a reader that began before their put",
			   path, early, first);
	kfree(span);
	return early;
}

static void rfk_hold_release(void *unused)
{
	rcu_free_release();
}

bool rfk_hold(struct kunit *test, const char *part)
{
	if (!mm_hook(test, RCU_FREE_HOLD, part))
		return false;
	rcu_free_hold();
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rfk_hold_release,
							NULL), 0);
	rfk_ctx(test)->held = true;
	return true;
}

void rfk_release(struct kunit *test)
{
	rfk_ctx(test)->held = false;
	kunit_release_action(test, rfk_hold_release, NULL);
}

/* Give the turn of the rated drains back to the time */
static void rfk_turn_natural(void *unused)
{
	rcu_free_turn_hook(RCU_FREE_TURN_NATURAL);
}

void rfk_turn_force(struct kunit *test, enum rcu_free_turn_hook how)
{
	rcu_free_turn_hook(how);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rfk_turn_natural,
							NULL), 0);
}

void rfk_turn_release(struct kunit *test)
{
	kunit_release_action(test, rfk_turn_natural, NULL);
}

u8 rfk_pattern(unsigned long pfn, unsigned int off)
{
	return mm_test_pattern(((u64)pfn << PAGE_SHIFT) + off, 0);
}

void rfk_fill_pattern(struct page *page, unsigned int nr)
{
	unsigned int i, off;

	for (i = 0; i < nr; i++) {
		u8 *p = page_address(page + i);

		for (off = 0; off < PAGE_SIZE; off++)
			p[off] = rfk_pattern(page_to_pfn(page + i), off);
	}
}

unsigned long rfk_bad_bytes(struct page *page, unsigned int nr)
{
	unsigned long bad = 0;
	unsigned int i, off;

	for (i = 0; i < nr; i++) {
		const u8 *p = page_address(page + i);

		for (off = 0; off < PAGE_SIZE; off++)
			bad += p[off] != rfk_pattern(page_to_pfn(page + i), off);
	}
	return bad;
}

bool rfk_try_alloc_all(struct page **pages, int nr, gfp_t gfp,
		       gfp_t gfp_last)
{
	int i;

	for (i = 0; i < nr; i++) {
		pages[i] = alloc_page(i == nr - 1 ? gfp_last : gfp);
		if (!pages[i])
			break;
	}
	if (i == nr)
		return true;
	while (i--)
		__free_page(pages[i]);
	return false;
}

void rfk_alloc_all(struct kunit *test, struct page **pages, int nr,
		   gfp_t gfp, gfp_t gfp_last)
{
	if (!rfk_try_alloc_all(pages, nr, gfp, gfp_last))
		KUNIT_FAIL_AND_ABORT(test, "could not allocate %d pages", nr);
}

struct page **rfk_dma_pages(struct kunit *test)
{
	struct page **pages;
	unsigned long managed = 0;
	int nid;

	if (!IS_ENABLED(CONFIG_ZONE_DMA))
		kunit_skip(test,
			   "config: CONFIG_ZONE_DMA is off: a zone the case can fill without starving the rest");
#ifdef CONFIG_ZONE_DMA
	for_each_online_node(nid)
		managed += zone_managed_pages(&NODE_DATA(nid)->node_zones[ZONE_DMA]);
#endif
	/* arm64's virt machine puts all RAM below 4 GiB in ZONE_DMA */
	if (managed > RFK_DMA_MAX_PAGES)
		kunit_skip(test,
			   "machine: ZONE_DMA has %lu pages, more than the %lu the case can fill",
			   managed, (unsigned long)RFK_DMA_MAX_PAGES);
	pages = kunit_kcalloc(test, RFK_DMA_MAX_PAGES, sizeof(*pages),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	return pages;
}

int rfk_fill_zone_dma(struct page **pages, int n, bool memalloc)
{
	unsigned int noreclaim = 0;
	struct page *page;
	int before;

	if (memalloc)
		noreclaim = memalloc_noreclaim_save();
	do {
		before = n;
		/*
		 * An allocation refills the pcp list of the CPU it runs on
		 * with a batch: a fill that moved CPUs midway would leave
		 * that batch on the other CPU's list, back in the buddy at
		 * the next drain (KASAN runs saw 16 such pages form the
		 * order-3 block the drain streak case must never find).
		 * Pinned, and the lists drained before each pass.
		 */
		drain_all_pages(NULL);
		migrate_disable();
		while (n < RFK_DMA_MAX_PAGES) {
			page = alloc_page(GFP_KERNEL | GFP_DMA | __GFP_NORETRY |
					  __GFP_NOWARN);
			if (!page)
				break;
			pages[n++] = page;
		}
		migrate_enable();
	} while (memalloc && n > before && n < RFK_DMA_MAX_PAGES);
	if (memalloc)
		memalloc_noreclaim_restore(noreclaim);
	return n;
}

/*
 * A fallback that steals a pageblock boosts the watermark by one: kswapd
 * drops it once it has balanced the zone, and the cases that fill a zone
 * keep kswapd away, so it would stay and raise the min watermark.
 */
void rfk_zone_drop_boost(struct zone *zone)
{
	unsigned long flags;

	spin_lock_irqsave(&zone->lock, flags);
	zone->watermark_boost = 0;
	spin_unlock_irqrestore(&zone->lock, flags);
}

static int rfk_cmp_page_pfn(const void *a, const void *b)
{
	unsigned long pa = page_to_pfn(*(struct page * const *)a);
	unsigned long pb = page_to_pfn(*(struct page * const *)b);

	return pa < pb ? -1 : pa > pb;
}

int rfk_dma_blocks(struct page **pages, int *nr, unsigned long *src,
		   unsigned long *dst)
{
	const unsigned long nr_block = pageblock_nr_pages;
	/* ZONE_DMA is 16 MiB, a pageblock at least 2 MiB */
	struct page *blocks[8];
	int j, nr_blocks = 0;
	unsigned long i;

	drain_all_pages(NULL);
	while (nr_blocks < ARRAY_SIZE(blocks)) {
		blocks[nr_blocks] = alloc_pages(RFK_DMA_MOVABLE | __GFP_NORETRY |
						__GFP_NOWARN, pageblock_order);
		if (!blocks[nr_blocks])
			break;
		split_page(blocks[nr_blocks++], pageblock_order);
	}
	sort(blocks, nr_blocks, sizeof(*blocks), rfk_cmp_page_pfn, NULL);
	/* src the lowest, dst the highest, then the others */
	if (nr_blocks > 1)
		swap(blocks[1], blocks[nr_blocks - 1]);
	*nr = 0;
	for (j = 0; j < nr_blocks; j++)
		for (i = 0; i < nr_block; i++)
			pages[(*nr)++] = blocks[j] + i;
	if (nr_blocks < 2 ||
	    page_to_pfn(blocks[1]) - page_to_pfn(blocks[0]) < 2 * nr_block)
		return -ENOSPC;
	*src = page_to_pfn(blocks[0]);
	*dst = page_to_pfn(blocks[1]);
	if (get_pageblock_migratetype(blocks[0]) != MIGRATE_MOVABLE ||
	    get_pageblock_migratetype(blocks[1]) != MIGRATE_MOVABLE)
		return -EINVAL;
	return 0;
}

void rfk_compaction_afresh(struct zone *zone, int order)
{
#ifdef CONFIG_COMPACTION
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
#endif
	rfk_zone_drop_boost(zone);
}

struct file *rfk_case_file(struct kunit *test, struct vfsmount *mnt,
			   const char *name)
{
	struct file *file;

	file = file_open_root_mnt(mnt, name, O_CREAT | O_RDWR, 0600);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput,
							file), 0);
	return file;
}

void rfk_require_contig(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_CONTIG_ALLOC))
		kunit_skip(test, "config: CONFIG_CONTIG_ALLOC is off");
}

int rfk_alloc_contig(unsigned long start, unsigned long end)
{
#ifdef CONFIG_CONTIG_ALLOC
	return alloc_contig_range(start, end, ACR_FLAGS_NONE,
				  GFP_KERNEL | __GFP_NOWARN);
#else
	return -EOPNOTSUPP;
#endif
}

void rfk_free_contig(unsigned long start, unsigned long nr)
{
#ifdef CONFIG_CONTIG_ALLOC
	free_contig_range(start, nr);
#endif
}

/*
 * The work that frees waiting pages counts its event after it has freed
 * them: a case that saw them back may read the event a moment early.
 */
unsigned long rfk_event_rise(struct kunit *test, const char *name,
			     unsigned long ev0, unsigned long want)
{
	unsigned long deadline = jiffies + HZ;
	unsigned long rise;

	while ((rise = vm_event(test, name) - ev0) < want &&
	       time_before(jiffies, deadline))
		usleep_range(1000, 2000);
	return rise;
}

struct rfk_moved_file *rfk_moved_file_create(struct kunit *test,
					     const char *name)
{
	const size_t size = RFK_MOVED_FOLIOS * PAGE_SIZE;
	struct rfk_moved_file *mf;
	size_t i;

	mf = kunit_kzalloc(test, sizeof(*mf), GFP_KERNEL);
	if (!mf)
		return NULL;
	mf->file = rfk_case_file(test, mm_test_mount(test, "tmpfs", "never"),
				 name);
	mf->data = kunit_kmalloc(test, size, GFP_KERNEL);
	mf->back = kunit_kzalloc(test, size, GFP_KERNEL);
	if (!mf->data || !mf->back)
		return NULL;
	for (i = 0; i < size; i++)
		mf->data[i] = rfk_pattern(i / PAGE_SIZE, i % PAGE_SIZE);
	return mf;
}

int rfk_moved_file_write(struct rfk_moved_file *mf, struct page *first,
			 unsigned int nr)
{
	loff_t pos = 0;
	ssize_t ret;
	int i;

	if (WARN_ON(!nr || nr > RFK_MOVED_FOLIOS))
		return -EINVAL;
	migrate_disable();
	mf->nr = nr;
	for (i = 0; i < nr; i++)
		__free_page(first + i);
	ret = kernel_write(mf->file, mf->data, nr * PAGE_SIZE, &pos);
	migrate_enable();
	if (ret < 0)
		return ret;
	return ret == nr * PAGE_SIZE ? 0 : -EIO;
}

int rfk_moved_file_flag(struct kunit *test, struct rfk_moved_file *mf,
			unsigned long start, unsigned long end)
{
	struct folio *folio;
	unsigned int i;

	for (i = 0; i < mf->nr; i++) {
		folio = filemap_lock_folio(mf->file->f_mapping, i);
		if (IS_ERR(folio))
			return PTR_ERR(folio);
		folio_set_rcu_free(folio);
		if (folio_pfn(folio) >= start && folio_pfn(folio) < end)
			mf->in[mf->nr_in++] = &folio->page;
		folio_unlock(folio);
		folio_put(folio);
	}
	if (!mf->nr_in)
		kunit_skip(test, "machine: no folio of the file in the range");
	lru_add_drain_all();

	mf->drains0 = vm_event(test, "pgfree_rcu_drain");
	mf->held = rfk_hold(test, "the drain that freed the old copies");
	for (i = 0; i < mf->nr_in; i++)
		rfk_watch(test, mf->in[i]);
	return 0;
}

void rfk_moved_file_check(struct kunit *test, struct rfk_moved_file *mf,
			  int ret)
{
	const size_t size = mf->nr * PAGE_SIZE;
	loff_t pos = 0;

	KUNIT_ASSERT_EQ(test, kernel_read(mf->file, mf->back, size, &pos),
			size);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0,
			    "%u folios migrated, their old copies left waiting",
			    mf->nr_in);
	if (mf->held)
		KUNIT_EXPECT_GE(test,
				vm_event(test, "pgfree_rcu_drain") - mf->drains0,
				1);
	KUNIT_EXPECT_EQ(test, memcmp(mf->data, mf->back, size), 0);
}

void rfk_require_memory_failure(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "config: CONFIG_MEMORY_FAILURE is off");
}

static int rfk_mf_call_fn(void *data)
{
	struct rfk_mf_call *call = data;

	if (call->mm)
		kthread_use_mm(call->mm);
	call->ret = call->soft ? soft_offline_page(call->pfn, 0) :
				 memory_failure(call->pfn,
						MF_SW_SIMULATED | call->flags);
	if (call->mm)
		kthread_unuse_mm(call->mm);
	complete(&call->done);
	return 0;
}

void rfk_unpoison_pfn(void *data)
{
	unsigned long *pfn = data;

	if (*pfn && PageHWPoison(pfn_to_page(*pfn)))
		unpoison_memory(*pfn);
}

struct rfk_mf_call *rfk_mf_call_setup(struct kunit *test,
				      unsigned long **left_poisoned)
{
	struct rfk_mf_call *call;

	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs: memory_failure() runs on one while the case holds the other");
	call = kunit_kzalloc(test, sizeof(*call), GFP_KERNEL);
	*left_poisoned = kunit_kzalloc(test, sizeof(**left_poisoned),
				       GFP_KERNEL);
	if (!call || !*left_poisoned)
		return NULL;
	/* Runs after the exit, which lets what the case left waiting go */
	if (kunit_add_action_or_reset(test, rfk_unpoison_pfn, *left_poisoned))
		return NULL;
	init_completion(&call->done);
	return call;
}

struct task_struct *rfk_mf_call_thread(struct rfk_mf_call *call)
{
	return rfk_other_cpu_thread(rfk_mf_call_fn, call, "rcu_free_mf");
}

struct task_struct *rfk_other_cpu_thread(int (*fn)(void *data), void *data,
					 const char *name)
{
	struct task_struct *task;

	task = kthread_create(fn, data, "%s", name);
	if (!IS_ERR(task))
		kthread_bind(task, cpumask_any_but(cpu_online_mask,
						   smp_processor_id()));
	return task;
}

bool rfk_in_gp_wait_any(struct task_struct *task, bool barrier)
{
#if IS_ENABLED(CONFIG_STACKTRACE) && IS_ENABLED(CONFIG_KALLSYMS)
	char sym[KSYM_SYMBOL_LEN];
	unsigned long entries[32];
	unsigned int i, n;

	if (task_is_running(task))
		return false;
	n = stack_trace_save_tsk(task, entries, ARRAY_SIZE(entries), 0);
	for (i = 0; i < n; i++) {
		sprint_symbol_no_offset(sym, entries[i]);
		if (str_has_prefix(sym, "synchronize_rcu") ||
		    strstr(sym, "wait_rcu_gp"))
			return true;
		if (barrier && (str_has_prefix(sym, "rcu_barrier") ||
				strstr(sym, "flush_work")))
			return true;
	}
#endif
	return false;
}

bool rfk_in_gp_wait(struct task_struct *task)
{
	return rfk_in_gp_wait_any(task, false);
}

bool rfk_gps_started(const struct rcu_gp_seq *c0, bool both)
{
#ifdef CONFIG_TREE_RCU
	struct rcu_gp_seq c;
	bool norm, exp;

	get_state_synchronize_rcu_full(&c);
	norm = c.norm != c0->norm;
	exp = c.exp != c0->exp;
	return both ? norm && exp : norm || exp;
#else
	return false;
#endif
}

bool rfk_exp_gp_started(const struct rcu_gp_seq *c0)
{
#ifdef CONFIG_TREE_RCU
	struct rcu_gp_seq c;

	get_state_synchronize_rcu_full(&c);
	return c.exp != c0->exp;
#else
	return false;
#endif
}
