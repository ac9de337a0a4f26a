// SPDX-License-Identifier: GPL-2.0
/*
 * A read without folio references (rcu-free series, patches 13 and 14)
 * stopped inside its RCU section, between its read of i_size and the
 * re-check of the slot, or after that re-check, while a kthread splits,
 * punches, truncates and extends the file (suite lockless_copy_window).
 * The stop is our test hook filemap_read_rcu_window(), a KUnit static
 * stub: without it the case skips whole, naming it (no read can stop at
 * a point inside an RCU section otherwise).  On a kernel without the
 * series (no CONFIG_PAGE_RCU_FREE) it skips, saying so.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sizes.h>
#include <linux/swap.h>

#include "../internal.h"
#include "lockless_read.h"

/* Not in the tree (LOCKLESS_READ_KUNIT_HAVE_SKIP_MARK_ACCESSED): never called */
#if !IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_SKIP_MARK_ACCESSED)
static inline bool folio_may_skip_mark_accessed(struct folio *folio)
{
	return false;
}
#endif

/* ------------------------------------- the windows around the slot re-check */

/*
 * A read of several pages of a hot large folio, stopped inside its RCU
 * section after its read of i_size (the hook filemap_read_rcu_window(), a
 * KUnit static stub), while a kthread on another CPU changes the file.
 * Before the slot re-check, the kthread splits the folio to order 0 and
 * punches the pages behind the first, or truncates the file to its first
 * page or two: the re-check is of the slot of the last page to copy, and
 * must see that the folio no longer covers it, and leave the read to the
 * slow path.  After the re-check has passed, the kthread splits the folio,
 * truncates the file to its first page and writes new bytes past its old
 * end: the read must copy from the folio it holds no further than the
 * i_size it read before the re-check.
 */
struct window_step {
	const char *name;
	bool pmd;		/* a PMD folio, else an order-2 one */
	pgoff_t keep;		/* truncate to @keep pages; 0: punch 1.. */
	pgoff_t size;		/* pages in the file; 0: 2 MiB */
	bool after;		/* stop after the re-check, and extend */
};

/*
 * Truncated to one page, the tree shrinks to its root entry and the
 * reader's node holds a retry entry where the folio was; truncated to two,
 * the node stays and its slot 0 still holds the folio, now of order 0.
 */
static const struct window_step window_steps[] = {
	{ .name = "PMD folio split, pages 1-15 punched", .pmd = true },
	{ .name = "PMD folio split, file truncated to one page",
	  .pmd = true, .keep = 1 },
	{ .name = "order-2 folio split, pages 1-3 punched" },
	{ .name = "order-2 folio split, file truncated to one page",
	  .keep = 1 },
	{ .name = "order-2 folio split, file truncated to two pages",
	  .keep = 2 },
	{ .name = "after the re-check: 2-page file, PMD folio split, cut to 1, written to 16",
	  .pmd = true, .keep = 1, .size = 2, .after = true },
};

KUNIT_ARRAY_PARAM_DESC(window_step, window_steps, name);

/* The hang guard of the window: its expiry fails the case */
#define WINDOW_GUARD_NS		(10 * NSEC_PER_SEC)
#define WINDOW_SPLIT_TRIES	10

/* What the stopped reader and the kthread share (test->priv) */
struct window {
	const struct window_step *step;
	struct mm_kunit_file *lf;
	struct address_space *mapping;
	pgoff_t nr;			/* pages the read asks for */
	u8 *fresh;			/* after: the bytes written past @keep */
	struct task_struct *task;	/* created, woken by the stop */
	/* Set by the stop */
	bool stopped;
	struct folio *folio;		/* found by the reader, not held */
	pgoff_t index, end;		/* what the reader was to copy */
	bool guard_expired;
	/* Set by the kthread before done */
	int split_err, split_tries, step_err;
	const char *step_op;		/* what @step_err is of */
	bool done;
};

/*
 * The kthread: split the folio the reader found, then punch or truncate,
 * and (after) write the fresh bytes past what it kept
 */
static int window_step_fn(void *arg)
{
	struct window *w = arg;
	loff_t len = (w->nr - 1) * PAGE_SIZE;

	/*
	 * -EAGAIN: someone else's reference (an LRU batch of this CPU; the
	 * case drained them all before the read)
	 */
	do {
		if (w->split_tries++) {
			lru_add_drain();
			msleep(20);
		}
		w->split_err = mm_kunit_split_folio(w->lf, 0, w->folio);
	} while (w->split_err == -EAGAIN &&
		 w->split_tries < WINDOW_SPLIT_TRIES);
	w->step_op = w->step->keep ? "truncate" : "punch";
	if (!w->split_err && w->step->keep)
		w->step_err = vfs_truncate(&w->lf->file->f_path,
					   w->step->keep * PAGE_SIZE);
	else if (!w->split_err)
		w->step_err = vfs_fallocate(w->lf->file, FALLOC_FL_PUNCH_HOLE |
					    FALLOC_FL_KEEP_SIZE, PAGE_SIZE, len);
	if (!w->split_err && !w->step_err && w->step->after) {
		loff_t pos = w->step->keep * PAGE_SIZE;
		size_t n = (w->nr - w->step->keep) * PAGE_SIZE;
		ssize_t ret;

		w->step_op = "write";
		ret = kernel_write(w->lf->file, w->fresh, n, &pos);
		if (ret != n)
			w->step_err = ret < 0 ? ret : -EIO;
	}
	/* The results above before done: the reader reads them after it */
	smp_store_release(&w->done, true);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/* Stop and put the kthread, once (also as an action, if the read aborts) */
static void window_task_stop(void *arg)
{
	struct window *w = arg;

	if (w->task)
		kthread_stop_put(w->task);
	w->task = NULL;
}

/* Every other read skips the window again, however the case ends */
static void window_key_off(void *unused)
{
	static_branch_disable(&filemap_read_rcu_window_on);
}

/*
 * The stub of filemap_read_rcu_window(), for this test's thread only: at
 * the first stop in the case's file on the step's side of the re-check,
 * wake the kthread and wait inside the reader's RCU section until it is
 * done (or the guard expires).
 */
static void window_stop(struct folio *folio, pgoff_t index, pgoff_t end,
			bool checked)
{
	struct kunit *test = kunit_get_current_test();
	struct window *w = test ? test->priv : NULL;
	ktime_t deadline;

	if (!w || w->stopped || checked != w->step->after ||
	    READ_ONCE(folio->mapping) != w->mapping)
		return;
	w->stopped = true;
	w->folio = folio;
	w->index = index;
	w->end = end;
	wake_up_process(w->task);
	deadline = ktime_add_ns(ktime_get(), WINDOW_GUARD_NS);
	/* Pairs with the release of done in window_step_fn() */
	while (!smp_load_acquire(&w->done)) {
		if (ktime_after(ktime_get(), deadline)) {
			w->guard_expired = true;
			return;
		}
		cpu_relax();
	}
}

/*
 * A hot tmpfs file of @size bytes written with @seed whose first folio is
 * a PMD folio, or the order-2 folio of a split of it, flagged, and for
 * which a read from the first byte may leave folio_mark_accessed() out.
 */
static struct mm_kunit_file *window_file(struct kunit *test, bool pmd,
					 loff_t size, u8 seed)
{
	struct mm_kunit_file *lf;
	struct folio *folio;
	unsigned int i;
	bool skips;
	int err;

	lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS_HUGE, size);
	mm_kunit_file_write(test, lf, 0, lf->size, seed);
	mm_kunit_need_pmd_folio(test, lf, 0);
	if (!pmd) {
		folio = mm_kunit_file_folio(lf, 0);
		KUNIT_ASSERT_NOT_NULL(test, folio);
		folio_lock(folio);
		err = split_folio_to_order(folio, 2);
		folio_unlock(folio);
		folio_put(folio);
		KUNIT_ASSERT_EQ_MSG(test, err, 0, "split of the PMD folio to order 2");
	}
	lr_make_hot(test, lf);
	for (i = 0; i < 8; i++) {
		KUNIT_ASSERT_GT(test, lr_read_at(test, lf, 0, 16), 0);
		lru_add_drain_all();
		folio = mm_kunit_file_folio(lf, 0);
		KUNIT_ASSERT_NOT_NULL(test, folio);
		skips = folio_may_skip_mark_accessed(folio);
		KUNIT_ASSERT_EQ_MSG(test, folio_order(folio),
				    pmd ? (unsigned int)HPAGE_PMD_ORDER : 2U,
				    "the folio at 0 has another order");
		folio_put(folio);
		if (skips)
			break;
	}
	return lf;
}

/*
 * Patch 14: a read of a large folio's first pages, stopped between its
 * i_size read and its slot re-check while the folio is split and the
 * pages behind the first are punched out (or truncated away), returns
 * the file as it is after that: page 0's bytes and zeroes for the punched
 * pages, or the one page left.  No re-check copies the old bytes of pages
 * that are no longer in the file, in every step; a re-check of the slot of
 * the first page does so where that slot still holds the split's first
 * folio, the order-2 steps that keep the node (pages 1-3 punched,
 * truncated to two pages).  The PMD folio's pages 0 and 15 share a slot of
 * their node, which the split turns into a child node.
 *
 * Stopped after the re-check instead, in a file of two pages whose PMD
 * folio is split and truncated to one page, then written with new bytes
 * up to 16: the read copies the held folio up to the i_size it read
 * first (page 1 may be the old one) and finds the new bytes from there
 * on.  A read that takes i_size after the re-check copies the held
 * folio's zeroes past the old end instead.  In every step the stop must
 * have been reached, with the split and the change done in it.
 */
static void lockless_copy_window_split_cut(struct kunit *test)
{
	const struct window_step *step = test->param_value;
	struct mm_kunit_reader *r;
	struct task_struct *task;
	struct window *w;
	size_t len, got_len, i;
	u8 *want;
	ssize_t ret;
	int cpu;

	MM_HOOK_REQUIRE(test, FILEMAP_READ_RCU_WINDOW);
	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 online CPUs: the split runs on one while the reader waits on the other");
	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	w->step = step;
	w->nr = step->pmd ? 16 : 4;
	w->lf = window_file(test, step->pmd,
			    step->size ? step->size * PAGE_SIZE : SZ_2M, 7);
	w->mapping = w->lf->file->f_mapping;
	len = w->nr * PAGE_SIZE;
	want = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	memcpy(want, w->lf->want, (step->keep ?: 1) * PAGE_SIZE);
	if (step->after) {
		w->fresh = want + step->keep * PAGE_SIZE;
		for (i = step->keep * PAGE_SIZE; i < len; i++)
			want[i] = mm_test_pattern(i, 9);
	}
	r = mm_kunit_reader_create(test);
	/* No LRU batch holds a reference that would fail the split */
	lru_add_drain_all();

	test->priv = w;
	kunit_activate_static_stub(test, filemap_read_rcu_window, window_stop);
	/* The reader calls the stub only while the key is on */
	static_branch_enable(&filemap_read_rcu_window_on);
	mm_kunit_defer(test, window_key_off, NULL);
	migrate_disable();
	cpu = cpumask_any_but(cpu_online_mask, smp_processor_id());
	task = kthread_create_on_cpu(window_step_fn, w, cpu, "lc_window/%u");
	if (IS_ERR(task)) {
		migrate_enable();
		KUNIT_FAIL_AND_ABORT(test, "kthread_create_on_cpu: %ld",
				     PTR_ERR(task));
	}
	get_task_struct(task);
	w->task = task;
	/* A read that aborts the case must not leave the kthread behind */
	mm_kunit_defer(test, window_task_stop, w);
	ret = mm_kunit_read(test, r, w->lf, MM_KUNIT_KVEC, 0, len);
	migrate_enable();
	static_branch_disable(&filemap_read_rcu_window_on);
	kunit_deactivate_static_stub(test, filemap_read_rcu_window);
	window_task_stop(w);
	test->priv = NULL;

	KUNIT_ASSERT_TRUE_MSG(test, w->stopped,
			      "%s: the read never reached the window (not copied without a reference)",
			      step->name);
	KUNIT_ASSERT_FALSE_MSG(test, w->guard_expired,
			       "%s: split and cut not done 10 s after the reader stopped",
			       step->name);
	KUNIT_ASSERT_EQ_MSG(test, w->split_err, 0,
			    "%s: split in the window failed after %d tries",
			    step->name, w->split_tries);
	KUNIT_ASSERT_EQ_MSG(test, w->step_err, 0, "%s: %s in the window failed",
			    step->name, w->step_op);
	KUNIT_EXPECT_EQ_MSG(test, w->index, 0UL, "%s: stopped at another page",
			    step->name);
	KUNIT_EXPECT_EQ_MSG(test, w->end, w->nr,
			    "%s: the reader was not to copy all %lu pages",
			    step->name, w->nr);
	got_len = step->keep && !step->after ? step->keep * PAGE_SIZE : len;
	KUNIT_ASSERT_EQ_MSG(test, ret, (ssize_t)got_len,
			    "%s: the read returned another length", step->name);
	/* After: the old end, page 1, read before the change is no fault */
	if (step->after &&
	    !memcmp(r->kbuf + PAGE_SIZE, w->lf->want + PAGE_SIZE, PAGE_SIZE))
		memcpy(want + PAGE_SIZE, w->lf->want + PAGE_SIZE, PAGE_SIZE);
	mm_kunit_check_bytes(test, r->kbuf, want, 0, got_len, step->name);
}

static int lockless_copy_window_test_init(struct kunit *test)
{
	lr_require_rcu_free(test);
	lr_wait_deferred();
	if (lr_switch_exists(test))
		lr_switch(test, true);
	return 0;
}

static void lockless_copy_window_test_exit(struct kunit *test)
{
	lr_wait_deferred();
}

static struct kunit_case lockless_copy_window_cases[] = {
	KUNIT_CASE_PARAM(lockless_copy_window_split_cut,
			 window_step_gen_params),
	{}
};

static struct kunit_suite lockless_copy_window_suite = {
	.name = "lockless_copy_window",
	.init = lockless_copy_window_test_init,
	.exit = lockless_copy_window_test_exit,
	.test_cases = lockless_copy_window_cases,
};

kunit_test_suite(lockless_copy_window_suite);

MODULE_DESCRIPTION("KUnit tests of a read without folio references stopped while the file changes");
MODULE_LICENSE("GPL");
