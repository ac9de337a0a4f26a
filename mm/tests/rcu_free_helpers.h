/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rcu_free_* suites share (rcu_free_helpers.c, built once): the
 * suite fixture, the flagged frees every case watches for its grace
 * period, the hold of the waiting lists, ZONE_DMA filling and the byte
 * pattern of pages.
 *
 * The grace-period proof needs no patch of ours: rfk_put_flagged() takes
 * get_state_synchronize_rcu_full() at the last put of a flagged folio
 * (rfk_watch() just before a call that drops it), and whenever a watched
 * page is seen handed back (PG_rcu_free cleared: in the buddy, on a
 * per-CPU list or reallocated), rfk_check_freed() expects
 * poll_state_synchronize_rcu_full() to say a full grace period has
 * elapsed since.  Each case calls it right after the path under test
 * (normal grace period, expedite, drain before OOM, rcu_free_sync(),
 * compaction, memory failure); the exit waits for every watched page and
 * checks the rest.  Patch 19's count, rcu_free_nr_early(), is extra proof
 * where the hook is there.
 */
#ifndef MM_TESTS_RCU_FREE_HELPERS_H
#define MM_TESTS_RCU_FREE_HELPERS_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>

#include "../internal.h"
#include "../page_alloc.h"
#include "mm_hooks.h"
#include "mm_test_util.h"
#include "vmstat_by_name.h"

/*
 * Stand-ins for the feature's interfaces where the tree lacks them
 * (pristine 7.3, or CONFIG_PAGE_RCU_FREE off), or a prefix of the series
 * lacks the patch that adds one: rfk_init() skips every case in the first
 * two, a case that needs a later patch's interface skips with
 * rfk_require_*(), so these are never called.  Macros, so that they also
 * stand in for the no-op flag functions of a tree with the option off.
 */
#ifndef CONFIG_PAGE_RCU_FREE
#define folio_test_rcu_free(folio)	((void)(folio), false)
#define folio_set_rcu_free(folio)	((void)(folio))
#define folio_clear_rcu_free(folio)	((void)(folio))
#endif
#if !IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_SYNC)
static inline void rcu_free_sync(void) { }
#endif
#ifdef RCU_FREE_EXPEDITE_PAGES
#define RFK_HAVE_EXPEDITE	true
#else
#define RFK_HAVE_EXPEDITE	false
#define RCU_FREE_EXPEDITE_PAGES	1
#endif
#ifdef RCU_FREE_MAX_DRAINS
#define RFK_HAVE_MAX_DRAINS	true
#else
#define RFK_HAVE_MAX_DRAINS	false
#define RCU_FREE_MAX_DRAINS	1
#endif

/* Skip the case when the tree lacks what it checks */
void rfk_require_expedite(struct kunit *test);
void rfk_require_drain_bound(struct kunit *test);
void rfk_require_sync(struct kunit *test);

/* Pages of ZONE_DMA the drain cases can hold at most */
#define RFK_DMA_MAX_PAGES	(SZ_32M >> PAGE_SHIFT)

/* A page freed with the flag, and the grace-period state at its last put */
struct rfk_watch {
	struct page *page;
	struct rcu_gp_seq gp;
	bool seen;
	/* Seen back inside an rfk_span that began before its put */
	bool early;
	/* Seen back early by rfk_look_freed(), reported by rfk_check_freed() */
	bool marked;
};

/* The fixture of every rcu_free_* case: test->priv */
struct rfk_ctx {
	struct rfk_watch *watch;
	unsigned int nr_watch, nr_seen;
	unsigned long early0;
	/* rfk_hold() holds the lists: nothing moves them by itself */
	bool held;
	/* The suite's own state (its .init sets it) */
	void *suite;
};

/* .init and .exit of every rcu_free_* suite */
int rfk_init(struct kunit *test);
void rfk_exit(struct kunit *test);

static inline struct rfk_ctx *rfk_ctx(struct kunit *test)
{
	return test->priv;
}

/* Watch @page: its last put is now or in the next call */
void rfk_watch(struct kunit *test, struct page *page);
/*
 * Stop watching every page: for a case whose pages' struct pages cannot be
 * looked at any more (a memory block left offline)
 */
void rfk_unwatch_all(struct kunit *test);
/* Drop the last reference on @page with the flag set, watched */
void rfk_put_flagged(struct kunit *test, struct page *page);
/*
 * Check the watched pages seen handed back since the last call: each must
 * have had a full grace period since its last put.  And, while the lists
 * are held, that their counters and nr_free_rcu equal the pages on them.
 * @path names the free path in the failure.  Returns how many were newly
 * seen.
 */
unsigned int rfk_check_freed(struct kunit *test, const char *path);
/*
 * rfk_check_freed() for inside a reader, where a failure cannot be
 * reported (it may sleep): marks the pages seen back whose grace period
 * has not ended, for the next rfk_check_freed() to report.  Returns how
 * many watched pages are back that no rfk_check_freed() has seen yet.
 */
unsigned int rfk_look_freed(struct kunit *test);
/*
 * Wait (10 s at most, polling) until every watched page is back, checking
 * each as it is seen; false, with a failure, if some never came back.
 */
bool rfk_wait_watched(struct kunit *test, const char *path);
/* How many watched pages have not been seen back yet */
unsigned int rfk_nr_unseen(struct kunit *test);

/*
 * The state at the free, not when the case looks: rfk_check_freed() can
 * only say a page came back before a grace period when it looks before
 * one ends, and a free seen after a natural grace period passes it.  A
 * span is a reader (rcu_read_lock()) held on another CPU from
 * rfk_span_enter() to rfk_span_end(), looking at the pages watched from
 * its start on all the while: no grace period since their put can end
 * inside it, so any of them seen handed back there was freed early,
 * whatever happens after.  Between enter and end the case must wait for
 * no grace period (the span holds them all up).
 *
 * rfk_span_prepare(): the span's thread, on a CPU other than this one, not
 * in the reader yet; called with migration disabled, two CPUs online.
 * NULL if the thread could not be created.
 */
struct rfk_span;
struct rfk_span *rfk_span_prepare(struct kunit *test);
/*
 * Enter the reader and return once it is in (any context, interrupts
 * included: it spins); false if the thread never got there (a hang).
 */
bool rfk_span_enter(struct rfk_span *span);
/*
 * Leave the reader after a last look and free @span (process context).
 * Fails the case, naming @path, for every page seen back inside it;
 * returns how many.
 */
unsigned int rfk_span_end(struct kunit *test, struct rfk_span *span,
			  const char *path);

/*
 * Keep what the case frees from now on waiting with no grace period
 * started for it (rcu_free_hold()), so that only the path under test can
 * free it; the exit releases it.  Returns false, and logs that @part is
 * not checked, without the hook.
 */
bool rfk_hold(struct kunit *test, const char *part);

/**
 * rfk_turn_force() - force the turn of the rated drains until the case ends
 * @test: the case
 * @how: %RCU_FREE_TURN_TAKEN or %RCU_FREE_TURN_DUE (rcu_free_turn_hook())
 *
 * The turn is the time's again (%RCU_FREE_TURN_NATURAL) when the case
 * ends, however it ends, or at rfk_turn_release().  A no-op without the
 * turn hook.  The case ends if the action cannot be added (the turn is
 * the time's again then).
 */
void rfk_turn_force(struct kunit *test, enum rcu_free_turn_hook how);

/**
 * rfk_turn_release() - the turn of the rated drains the time's again now
 * @test: the case, after rfk_turn_force()
 */
void rfk_turn_release(struct kunit *test);
/* End the hold early (the exit does it otherwise) */
void rfk_release(struct kunit *test);

/* The zone counter @name summed over the populated zones, or -1 */
int rfk_zone_item(const char *name);

/*
 * Zone counter @item of @zone (NULL: summed over the populated zones),
 * once it equals @want or after 1 s: the work that hands pages back
 * lowers nr_free_rcu a moment after it clears their flag.
 */
long rfk_zone_stat_settle(struct zone *zone, int item, long want);

/* The byte at @off of the page at @pfn, and filling/checking it */
u8 rfk_pattern(unsigned long pfn, unsigned int off);
void rfk_fill_pattern(struct page *page, unsigned int nr);
unsigned long rfk_bad_bytes(struct page *page, unsigned int nr);

/*
 * @nr pages from alloc_page(@gfp), the last one from alloc_page(@gfp_last):
 * all of them, or the case ends with none left allocated.
 */
void rfk_alloc_all(struct kunit *test, struct page **pages, int nr,
		   gfp_t gfp, gfp_t gfp_last);
/* The same without ending the case: false, with none left allocated */
bool rfk_try_alloc_all(struct page **pages, int nr, gfp_t gfp,
		       gfp_t gfp_last);

/* An array for RFK_DMA_MAX_PAGES pages; skips without ZONE_DMA */
struct page **rfk_dma_pages(struct kunit *test);
/*
 * Take every page of ZONE_DMA the allocator gives without reserves into
 * @pages, from @n on; with @memalloc, the reserves too, and what the pcp
 * lists of other CPUs held (passes after a drain of them, until one gets
 * nothing).  The new count.
 */
int rfk_fill_zone_dma(struct page **pages, int n, bool memalloc);
/* Drop the watermark boost that filling @zone may have set */
void rfk_zone_drop_boost(struct zone *zone);

/* Movable ZONE_DMA pages, without waking kswapd */
#define RFK_DMA_MOVABLE	((GFP_USER & ~__GFP_KSWAPD_RECLAIM) | __GFP_DMA | \
			 __GFP_MOVABLE)
/*
 * Take every free pageblock of ZONE_DMA (8 at most) as order-0 pages into
 * @pages (of rfk_dma_pages()), from 0 on, *@nr set to how many: the
 * lowest pageblock first (*@src, its first pfn: where a compaction's
 * migration scanner starts), then the highest (*@dst: where its free
 * scanner starts), then the others.  0; -ENOSPC with fewer than two or
 * with no pageblock between those two (sync compaction isolates all of
 * src before it migrates, and its free scanner stops a pageblock above
 * the migration scanner's); -EINVAL when one of the two is not movable.
 * The pages taken are in @pages whatever it returns.
 */
int rfk_dma_blocks(struct page **pages, int *nr, unsigned long *src,
		   unsigned long *dst);
/*
 * Compaction of @zone as after boot: earlier cases left skip hints,
 * cached scanner positions and deferrals for @order on it, and a fill
 * may have boosted its watermarks.
 */
void rfk_compaction_afresh(struct zone *zone, int order);

/* Open @name on @mnt for the current case; closed when the case ends */
struct file *rfk_case_file(struct kunit *test, struct vfsmount *mnt,
			   const char *name);

/* Skip without CONFIG_CONTIG_ALLOC; alloc_contig_range() of [start, end) */
void rfk_require_contig(struct kunit *test);
int rfk_alloc_contig(unsigned long start, unsigned long end);
void rfk_free_contig(unsigned long start, unsigned long nr);

/* Folios of a tmpfs file of the case's, migrated by the path under test */
#define RFK_MOVED_FOLIOS	16

/**
 * struct rfk_moved_file - a tmpfs file of the case's whose flagged folios
 * the path under test migrates (alloc_contig_range(), memory offline)
 * @file: the file, closed when the case ends
 * @data: %RFK_MOVED_FOLIOS pages of bytes, the first @nr written to it
 * @back: the bytes read back after the path
 * @in: the flagged folios in the range the path empties
 * @nr: the file's pages (rfk_moved_file_write())
 * @nr_in: how many of them in the range
 * @drains0: pgfree_rcu_drain before the path
 * @held: the case holds the lists (rfk_hold())
 */
struct rfk_moved_file {
	struct file *file;
	u8 *data, *back;
	struct page *in[RFK_MOVED_FOLIOS];
	unsigned int nr, nr_in;
	unsigned long drains0;
	bool held;
};

/**
 * rfk_moved_file_create() - the file @name and the bytes it gets
 * @test: the case, which owns the memory; rfk_case_file() opens the file
 *	on a tmpfs mount of the case's
 * @name: the file's name
 *
 * Return: the file, not written yet, or NULL if memory ran out.
 */
struct rfk_moved_file *rfk_moved_file_create(struct kunit *test,
					     const char *name);
/**
 * rfk_moved_file_write() - write the file from pages of this CPU's lists
 * @mf: the file
 * @first: the first of @nr pages the case owns, freed to this CPU's pcp
 *	lists just before the write, so that the file's folios come from them
 * @nr: the file's pages, %RFK_MOVED_FOLIOS at most
 *
 * Return: 0, the negative result of kernel_write(), -EIO if it wrote
 * less than the whole file, or -EINVAL for an @nr out of range.
 */
int rfk_moved_file_write(struct rfk_moved_file *mf, struct page *first,
			 unsigned int nr);
/**
 * rfk_moved_file_flag() - flag the folios of the file, then watch those
 * the path must move
 * @test: the case; skips ("machine: ...") if no folio of the file is in
 *	the range
 * @mf: the file, written
 * @start: the first pfn of the range the path empties
 * @end: the pfn after it
 *
 * The folios in [@start, @end) go to @mf->in; then the frees are held
 * where the hook is (rfk_hold()) and those folios watched: their last
 * put is the migration's.
 *
 * Return: 0, or the error of the lookup of a folio of the file.
 */
int rfk_moved_file_flag(struct kunit *test, struct rfk_moved_file *mf,
			unsigned long start, unsigned long end);
/**
 * rfk_moved_file_check() - expect the path to have returned 0 and left
 * the file's bytes alone, and (held) the old copies freed by a drain
 * @test: the case, failed on a difference
 * @mf: the file, flagged with rfk_moved_file_flag()
 * @ret: what the path under test returned
 */
void rfk_moved_file_check(struct kunit *test, struct rfk_moved_file *mf,
			  int ret);

/* Skip without CONFIG_MEMORY_FAILURE */
void rfk_require_memory_failure(struct kunit *test);

/**
 * struct rfk_mf_call - a memory_failure() (or soft_offline_page()) that a
 * kthread of the case's makes on a second CPU while the case holds this one
 * @pfn: the page
 * @soft: soft_offline_page() instead
 * @flags: memory_failure()'s, besides MF_SW_SIMULATED
 * @mm: the thread's while it calls, or NULL
 * @ret: what the call returned, once @done
 * @done: completed when the call has returned
 */
struct rfk_mf_call {
	unsigned long pfn;
	bool soft;
	int flags;
	struct mm_struct *mm;
	int ret;
	struct completion done;
};

/**
 * rfk_unpoison_pfn() - a KUnit action: unpoison the pfn @data points to
 * @data: an unsigned long, the pfn; 0, or a page no longer poisoned:
 *	nothing to do
 */
void rfk_unpoison_pfn(void *data);
/**
 * rfk_mf_call_setup() - the call of a case that runs it on a second CPU
 * @test: the case; skips ("machine: ...") on one CPU
 * @left_poisoned: set to the pfn the case's action (rfk_unpoison_pfn())
 *	unpoisons once the case is over, after its exit; 0: none
 *
 * Return: the call, its pfn not set yet, or NULL if memory ran out or the
 * action could not be added.
 */
struct rfk_mf_call *rfk_mf_call_setup(struct kunit *test,
				      unsigned long **left_poisoned);
/**
 * rfk_mf_call_thread() - the kthread that makes @call, not woken yet
 * @call: set up by rfk_mf_call_setup(), its pfn set
 *
 * Called with migration disabled: the thread is bound to a CPU other than
 * this one.
 *
 * Return: the thread, or an ERR_PTR() if it could not be made.
 */
struct task_struct *rfk_mf_call_thread(struct rfk_mf_call *call);

/*
 * A kthread running @fn(@data), bound to a CPU other than this one, not
 * woken yet: called with migration disabled (two CPUs online).
 */
struct task_struct *rfk_other_cpu_thread(int (*fn)(void *data), void *data,
					 const char *name);
/*
 * Whether @task sleeps inside a wait for an RCU grace period: a frame of
 * synchronize_rcu*() or *wait_rcu_gp() on its stack.  Always false
 * without CONFIG_STACKTRACE and CONFIG_KALLSYMS.
 */
bool rfk_in_gp_wait(struct task_struct *task);
/*
 * rfk_in_gp_wait(), and with @barrier also a frame of rcu_barrier*() or
 * *flush_work() (a struct rcu_work flushed waits for its grace period).
 */
bool rfk_in_gp_wait_any(struct task_struct *task, bool barrier);
/*
 * Whether grace periods started since @c0 was taken (with none in
 * progress then: the cookie of get_state_synchronize_rcu_full() moved):
 * a normal and an expedited one if @both, else either.  False on Tiny RCU.
 */
bool rfk_gps_started(const struct rcu_gp_seq *c0, bool both);
#ifdef CONFIG_TREE_RCU
/*
 * Exported by kernel/rcu/update.c, declared for RCU's own use in
 * kernel/rcu/rcu.h: whether synchronize_rcu() is expedited (all of them
 * until the in-kernel boot ends), and the nesting that makes it so.
 */
bool rcu_gp_is_expedited(void);
void rcu_expedite_gp(void);
void rcu_unexpedite_gp(void);
#endif
/* Whether an expedited grace period started since @c0; false on Tiny RCU */
bool rfk_exp_gp_started(const struct rcu_gp_seq *c0);

/* A vm event's rise since @ev0, waited for (1 s at most) to reach @want */
unsigned long rfk_event_rise(struct kunit *test, const char *name,
			     unsigned long ev0, unsigned long want);

#endif /* MM_TESTS_RCU_FREE_HELPERS_H */
