// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for memory failure and soft offline of pages with
 * PG_rcu_free (rcu-free series, patch 9): a waiting page is freed first
 * and then taken, never left poisoned in the allocator's way, and both of
 * a CPU's lists are taken whole; memory_failure() of a flagged folio in
 * use, or of one already poisoned, waits for the readers that may copy
 * from it without a reference.  A flagged folio queued around the
 * poisoning is rcu_free_poison_queued_kunit.c's, memory_failure() that
 * drains only where it can help rcu_free_poison_bound_kunit.c's.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/swap.h>

#include "rcu_free_gate.h"
#include "rcu_free_helpers.h"

/* The two entry points that take a page out of use */
struct poison_case {
	const char *name;
	bool soft;
	/* Freed inside a reader, beside a page that starts the batch */
	bool both_lists;
};

static const struct poison_case poison_cases[] = {
	{ "memory_failure", false, false },
	{ "soft_offline", true, false },
	{ "memory_failure, both lists", false, true },
	{ "soft_offline, both lists", true, true },
};

KUNIT_ARRAY_PARAM_DESC(poison, poison_cases, name);

static void takes_both_lists(struct kunit *test, const struct poison_case *c);

/*
 * memory_failure() (or soft offline) of a page waiting for a grace
 * period: it ends poisoned and out of the allocator, freed from the wait
 * after a grace period and off the lists (nr_free_rcu back, one drain
 * where the page was held); unpoisoned after.  "both lists": the call
 * takes both of a CPU's lists and loses neither (takes_both_lists()).
 */
static void rcu_free_poison_takes_waiting(struct kunit *test)
{
	const struct poison_case *c = test->param_value;
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	unsigned long drains0 = vm_event(test, "pgfree_rcu_drain");
	long waiting0, waiting_after;
	struct page *page;
	bool poisoned, buddy, held;
	unsigned long pfn;
	int ret, count;

	rfk_require_memory_failure(test);
	if (c->both_lists) {
		takes_both_lists(test, c);
		return;
	}
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	pfn = page_to_pfn(page);

	held = rfk_hold(test, "that the page still waited when it was poisoned");
	waiting0 = zone_stat_sum(nr_free_rcu);
	rfk_put_flagged(test, page);
	ret = c->soft ? soft_offline_page(pfn, 0) :
			memory_failure(pfn, MF_SW_SIMULATED);
	rfk_check_freed(test, c->name);
	waiting_after = rfk_zone_stat_settle(NULL, nr_free_rcu, waiting0);
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	if (poisoned)
		KUNIT_EXPECT_EQ(test, unpoison_memory(pfn), 0);

	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ_MSG(test, waiting_after, waiting0,
			    "still counted as waiting");
	if (held)
		KUNIT_EXPECT_GE_MSG(test,
				    vm_event(test, "pgfree_rcu_drain") - drains0,
				    1, "taken without a drain of the lists");
}

/* What mf_call_in_reader() saw from inside its reader section */
struct mf_reader_seen {
	bool poison;	/* PG_hwpoison set on the call's pfn */
	bool returned;	/* the call returned inside the section */
	bool waiting;	/* the call seen asleep in a grace-period wait */
};

/**
 * mf_reader_begin() - make @call's thread and enter a reader section
 * @test: the case
 * @call: set up by rfk_mf_call_setup()
 *
 * The thread is bound to another CPU and not woken; this thread is in
 * rcu_read_lock() with migration disabled when this returns.  Aborts the
 * case when the thread cannot be made.
 *
 * Return: the thread, with a reference for mf_reader_end().
 */
static struct task_struct *mf_reader_begin(struct kunit *test,
					   struct rfk_mf_call *call)
{
	struct task_struct *task;

	migrate_disable();
	task = rfk_mf_call_thread(call);
	if (IS_ERR(task)) {
		migrate_enable();
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	/* Its stack is looked at until this thread has left the section */
	get_task_struct(task);
	rcu_read_lock();
	return task;
}

/**
 * mf_reader_end() - leave the section once the call returned or waits
 * @call: the call its thread makes, woken
 * @task: from mf_reader_begin()
 * @seen: ->returned and ->waiting set
 *
 * Stays inside until the call returns or is seen asleep in a wait for a
 * grace period (its stack; 10 s are a hang guard, not a verdict), then
 * leaves the section and waits for the call to return.
 */
static void mf_reader_end(struct rfk_mf_call *call, struct task_struct *task,
			  struct mf_reader_seen *seen)
{
	unsigned long deadline = jiffies + 10 * HZ;

	seen->waiting = false;
	while (!(seen->returned = completion_done(&call->done)) &&
	       !(seen->waiting = rfk_in_gp_wait(task)) &&
	       time_before(jiffies, deadline))
		cpu_relax();
	rcu_read_unlock();
	migrate_enable();
	wait_for_completion(&call->done);
	put_task_struct(task);
}

/**
 * mf_call_in_reader() - make @call on another CPU inside a reader section
 * @test: the case
 * @call: set up by rfk_mf_call_setup(), its pfn set
 * @left_poisoned: the case's pfn to unpoison at its end, set to @call's
 * @seen: what this thread saw from inside the section
 *
 * This thread is the reader: it spins in rcu_read_lock() on its CPU while
 * the call runs on another, until PG_hwpoison is set (10 s are a hang
 * guard) and then as mf_reader_end() says.  Returns once the call has
 * returned; aborts the case when the thread cannot be made.
 */
static void mf_call_in_reader(struct kunit *test, struct rfk_mf_call *call,
			      unsigned long *left_poisoned,
			      struct mf_reader_seen *seen)
{
	struct task_struct *task = mf_reader_begin(test, call);
	unsigned long deadline;

	*left_poisoned = call->pfn;
	wake_up_process(task);
	deadline = jiffies + 10 * HZ;
	while (!(seen->poison = PageHWPoison(pfn_to_page(call->pfn))) &&
	       !completion_done(&call->done) && time_before(jiffies, deadline))
		cpu_relax();
	mf_reader_end(call, task, seen);
}

/*
 * takes_waiting, "both lists": nothing is lost when the call takes the
 * lists.  Inside a reader of this thread's, on this CPU (no hold), a page
 * is freed flagged, which starts the CPU's batch (its grace period held
 * up by the reader), then the page the call poisons, which waits on the
 * next list.  The call runs on the other CPU; the reader leaves once it
 * is seen asleep in a grace-period wait (its stack; 10 s are a hang
 * guard, not seen by then fails), having taken the lists.  It returns 0
 * with its page poisoned and held, and the other page back too (the call
 * frees every waiting page: a list taken and dropped leaves it waiting
 * for ever), nr_free_rcu back where it was.
 */
static void takes_both_lists(struct kunit *test, const struct poison_case *c)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	bool poisoned, buddy, other_back;
	struct mf_reader_seen seen;
	unsigned long *left_poisoned;
	struct task_struct *task;
	long waiting0, waiting_after;
	struct page *other, *page;
	struct rfk_mf_call *call;
	int count;

	call = rfk_mf_call_setup(test, &left_poisoned);
	KUNIT_ASSERT_NOT_NULL(test, call);
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS))
		kunit_skip(test,
			   "config: CONFIG_STACKTRACE or CONFIG_KALLSYMS is off: the call cannot be seen waiting");
	call->soft = c->soft;
	other = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	page = alloc_page(GFP_KERNEL);
	if (!page)
		__free_page(other);
	KUNIT_ASSERT_NOT_NULL(test, page);
	call->pfn = page_to_pfn(page);
	waiting0 = zone_stat_sum(nr_free_rcu);

	task = mf_reader_begin(test, call);
	rfk_put_flagged(test, other);
	rfk_put_flagged(test, page);
	*left_poisoned = call->pfn;
	wake_up_process(task);
	mf_reader_end(call, task, &seen);

	rfk_check_freed(test, c->name);
	other_back = !folio_test_rcu_free(page_folio(other));
	waiting_after = rfk_zone_stat_settle(NULL, nr_free_rcu, waiting0);
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	if (!call->ret && poisoned && count == 1) {
		KUNIT_EXPECT_EQ(test, unpoison_memory(call->pfn), 0);
		*left_poisoned = 0;
	}

	KUNIT_EXPECT_FALSE_MSG(test, seen.returned,
			       "%s returned inside the reader that held its page's grace period",
			       c->name);
	KUNIT_EXPECT_TRUE_MSG(test, seen.returned || seen.waiting,
			      "%s not seen in a synchronize_rcu*() or wait_rcu_gp() wait in 10 s",
			      c->name);
	KUNIT_EXPECT_EQ(test, call->ret, 0);
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_TRUE_MSG(test, other_back,
			      "the page that started the batch still waits after %s freed the waiting pages",
			      c->name);
	KUNIT_EXPECT_EQ_MSG(test, waiting_after, waiting0,
			    "nr_free_rcu not back: pages taken off the lists and not freed");
}

/* The hot tmpfs folio of waits_for_readers, and its page that is poisoned */
struct reader_case {
	const char *name;
	const char *huge;	/* the tmpfs mount's huge= */
	unsigned int order;	/* of the folio the write must give */
	pgoff_t page;		/* poisoned, within the folio */
};

static const struct reader_case reader_cases[] = {
	{ "order-0 folio", "never", 0, 0 },
	/* memory_failure() splits it: the new folio must keep PG_rcu_free */
	{ "PMD-size folio, a tail page", "always", PMD_ORDER, 5 },
};

KUNIT_ARRAY_PARAM_DESC(reader, reader_cases, name);

/* The verdict of a case whose call ran inside mf_call_in_reader() */
static void expect_waited_for_reader(struct kunit *test,
				     const struct rfk_mf_call *call,
				     const struct mf_reader_seen *seen)
{
	KUNIT_EXPECT_TRUE_MSG(test, seen->poison, "PG_hwpoison never set");
	KUNIT_EXPECT_EQ(test, call->ret, 0);
	KUNIT_EXPECT_FALSE_MSG(test, seen->returned,
			       "memory_failure() returned inside a reader's section");
	/* The 10 s are a hang guard: a reader let go without it is no verdict */
	KUNIT_EXPECT_TRUE_MSG(test, seen->returned || seen->waiting,
			      "memory_failure() not seen in a synchronize_rcu*() or wait_rcu_gp() wait in 10 s, blocked elsewhere");
}

static void mmput_action(void *mm)
{
	mmput(mm);
}

/*
 * memory_failure() of a hot tmpfs folio in use: a reader that found it
 * before PG_hwpoison was set may still be copying from it without a
 * reference, so memory_failure() must not return (and let its caller act
 * on the page) while such a reader's section lasts, also after it split a
 * PMD-size folio to take one of its pages.  The reader is this
 * thread, spinning in rcu_read_lock() on its CPU while memory_failure()
 * runs on another.  Once PG_hwpoison is set it stays inside until
 * memory_failure() is seen asleep in a wait for a grace period (or, as a
 * hang guard, 10 s): returning before that, however late, fails, and so
 * does not being seen in that wait within the 10 s.
 */
static void rcu_free_poison_waits_for_readers(struct kunit *test)
{
	const struct reader_case *c = test->param_value;
	size_t size = PAGE_SIZE << c->order;
	struct mf_reader_seen seen;
	unsigned long *poisoned;
	struct rfk_mf_call *call;
	unsigned int order;
	struct folio *folio;
	struct vfsmount *mnt;
	struct file *file;
	loff_t pos = 0;
	void *data;

	rfk_require_memory_failure(test);
	if (c->order && !IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		kunit_skip(test, "config: CONFIG_TRANSPARENT_HUGEPAGE is off");
	call = rfk_mf_call_setup(test, &poisoned);
	KUNIT_ASSERT_NOT_NULL(test, call);
	mnt = mm_test_mount(test, "tmpfs", c->huge);
	file = rfk_case_file(test, mnt, "poisoned");
	data = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memset(data, 0x5a, size);
	KUNIT_ASSERT_EQ(test, kernel_write(file, data, size, &pos), (ssize_t)size);
	folio = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	order = folio_order(folio);
	folio_set_rcu_free(folio);
	call->pfn = folio_pfn(folio) + c->page;
	folio_unlock(folio);
	folio_put(folio);
	KUNIT_ASSERT_EQ_MSG(test, order, c->order,
			    "the write did not give the folio the case needs");
	lru_add_drain_all();

	mf_call_in_reader(test, call, poisoned, &seen);
	expect_waited_for_reader(test, call, &seen);
}

/* The second call of again_waits_for_readers: its flags and verdict */
struct again_case {
	const char *name;
	int flags;
	int ret;
};

static const struct again_case again_cases[] = {
	{ "MF_ACTION_REQUIRED", MF_ACTION_REQUIRED, 0 },
	/* -EHWPOISON: the caller does nothing with the page, no wait */
	{ "no MF_ACTION_REQUIRED", 0, -EHWPOISON },
};

KUNIT_ARRAY_PARAM_DESC(again, again_cases, name);

/*
 * memory_failure() of a page that an earlier call poisoned but could not
 * handle (a flagged folio in use, on no LRU), from a thread whose mm does
 * not map it, with MF_ACTION_REQUIRED: it returns 0 (nothing to kill), and
 * its caller may then act on the page (x86 unmaps it from the direct
 * map), so it must wait for the readers that may still copy from it as
 * the first poisoning does when it succeeds.  The earlier call failed, so
 * no one waited.  The reader is this thread, as in waits_for_readers.
 * Without MF_ACTION_REQUIRED it returns -EHWPOISON and must not wait: it
 * returns while the reader is still inside.
 */
static void rcu_free_poison_again_waits_for_readers(struct kunit *test)
{
	const struct again_case *c = test->param_value;
	struct mf_reader_seen seen;
	unsigned long *poisoned;
	struct mm_struct *mm;
	struct rfk_mf_call *call;
	struct page *page;
	int first;

	rfk_require_memory_failure(test);
	call = rfk_mf_call_setup(test, &poisoned);
	KUNIT_ASSERT_NOT_NULL(test, call);
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mmput_action, mm), 0);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	call->pfn = page_to_pfn(page);
	*poisoned = call->pfn;
	first = memory_failure(call->pfn, MF_SW_SIMULATED);
	if (!PageHWPoison(page)) {
		__free_page(page);
		*poisoned = 0;
		KUNIT_FAIL_AND_ABORT(test,
				     "memory_failure() of a page in use left it unpoisoned (%d)",
				     first);
	}
	KUNIT_ASSERT_NE_MSG(test, first, 0,
			    "the first call handled a page in use on no LRU");
	folio_set_rcu_free(page_folio(page));
	call->flags = c->flags;
	call->mm = mm;

	mf_call_in_reader(test, call, poisoned, &seen);
	/* The unpoison drops this case's reference: the page's last */
	if (page_count(page) == 1 && !unpoison_memory(call->pfn))
		*poisoned = 0;

	if (c->flags & MF_ACTION_REQUIRED) {
		expect_waited_for_reader(test, call, &seen);
		return;
	}
	KUNIT_EXPECT_EQ(test, call->ret, c->ret);
	KUNIT_EXPECT_TRUE_MSG(test, seen.returned,
			      "memory_failure() returning -EHWPOISON did not return inside a reader's section%s",
			      seen.waiting ? ": seen in a grace-period wait" : "");
}

static struct kunit_case rcu_free_poison_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_poison_takes_waiting, poison_gen_params),
	KUNIT_CASE_PARAM(rcu_free_poison_waits_for_readers, reader_gen_params),
	KUNIT_CASE_PARAM(rcu_free_poison_again_waits_for_readers,
			 again_gen_params),
	{}
};

static struct kunit_suite rcu_free_poison_suite = {
	.name = "rcu_free_poison",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_poison_cases,
};

kunit_test_suite(rcu_free_poison_suite);

MODULE_DESCRIPTION("KUnit tests for memory failure of pages with PG_rcu_free");
MODULE_LICENSE("GPL");
