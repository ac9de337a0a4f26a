// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for memory failure and soft offline of pages with
 * PG_rcu_free (rcu-free series, patch 9, and patch 1's rule for poisoned
 * pages): a waiting page is freed first and then taken, never left
 * poisoned in the allocator's way; memory_failure() of a flagged folio in
 * use, or of one already poisoned, waits for the readers that may copy
 * from it without a reference; a soft-offlined folio is not queued while
 * poisoned, and its free after an unpoison waits for a grace period.
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

static void require_memory_failure(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "config: CONFIG_MEMORY_FAILURE is off");
}

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

	require_memory_failure(test);
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

struct mf_call {
	unsigned long pfn;
	bool soft;		/* soft_offline_page() instead */
	int flags;		/* memory_failure()'s, besides MF_SW_SIMULATED */
	struct mm_struct *mm;	/* the thread's while it calls, or NULL */
	int ret;
	struct completion done;
};

static int mf_call_fn(void *data)
{
	struct mf_call *call = data;

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

static void unpoison_pfn(void *data)
{
	unsigned long *pfn = data;

	if (*pfn && PageHWPoison(pfn_to_page(*pfn)))
		unpoison_memory(*pfn);
}

/*
 * The memory_failure() call of a case that runs it on a second CPU, and
 * the pfn the case's action unpoisons once the case is over (0: none).
 * Skips on one CPU.
 */
static struct mf_call *mf_call_setup(struct kunit *test,
				     unsigned long **left_poisoned)
{
	struct mf_call *call;

	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs: memory_failure() runs on one while the case holds the other");
	call = kunit_kzalloc(test, sizeof(*call), GFP_KERNEL);
	*left_poisoned = kunit_kzalloc(test, sizeof(**left_poisoned),
				       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, call);
	KUNIT_ASSERT_NOT_NULL(test, *left_poisoned);
	/* Runs after the exit, which lets what the case left waiting go */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unpoison_pfn,
							*left_poisoned), 0);
	init_completion(&call->done);
	return call;
}

/*
 * The kthread of @call, bound to a CPU other than this one, not woken:
 * called with migration disabled.
 */
static struct task_struct *mf_call_thread(struct mf_call *call)
{
	return rfk_other_cpu_thread(mf_call_fn, call, "rcu_free_mf");
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
 * @call: set up by mf_call_setup()
 *
 * The thread is bound to another CPU and not woken; this thread is in
 * rcu_read_lock() with migration disabled when this returns.  Aborts the
 * case when the thread cannot be made.
 *
 * Return: the thread, with a reference for mf_reader_end().
 */
static struct task_struct *mf_reader_begin(struct kunit *test,
					   struct mf_call *call)
{
	struct task_struct *task;

	migrate_disable();
	task = mf_call_thread(call);
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
static void mf_reader_end(struct mf_call *call, struct task_struct *task,
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
 * @call: set up by mf_call_setup(), its pfn set
 * @left_poisoned: the case's pfn to unpoison at its end, set to @call's
 * @seen: what this thread saw from inside the section
 *
 * This thread is the reader: it spins in rcu_read_lock() on its CPU while
 * the call runs on another, until PG_hwpoison is set (10 s are a hang
 * guard) and then as mf_reader_end() says.  Returns once the call has
 * returned; aborts the case when the thread cannot be made.
 */
static void mf_call_in_reader(struct kunit *test, struct mf_call *call,
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
	struct mf_call *call;
	int count;

	call = mf_call_setup(test, &left_poisoned);
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
				     const struct mf_call *call,
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
	struct mf_call *call;
	unsigned int order;
	struct folio *folio;
	struct vfsmount *mnt;
	struct file *file;
	loff_t pos = 0;
	void *data;

	require_memory_failure(test);
	if (c->order && !IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		kunit_skip(test, "config: CONFIG_TRANSPARENT_HUGEPAGE is off");
	call = mf_call_setup(test, &poisoned);
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
	struct mf_call *call;
	struct page *page;
	int first;

	require_memory_failure(test);
	call = mf_call_setup(test, &poisoned);
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

/*
 * Keep a page in this CPU's LRU batch and preemption off: until this
 * thread enables it again, lru_add_drain_all() on another CPU waits for
 * its work here.  False if something drained the batch before preemption
 * was off, every time.  Called with migration disabled; returns with
 * preemption disabled when true.
 */
static bool lru_batch_pending(struct kunit *test, struct file *file)
{
	struct folio *folio;
	pgoff_t index;
	loff_t pos;

	for (index = 0; index < 8; index++) {
		pos = index * PAGE_SIZE;
		KUNIT_ASSERT_EQ(test, kernel_write(file, "x", 1, &pos), 1);
		folio = filemap_get_folio(file->f_mapping, index);
		KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
		preempt_disable();
		if (!folio_test_lru(folio)) {
			folio_put(folio);
			return true;
		}
		preempt_enable();
		folio_put(folio);
	}
	return false;
}

/*
 * memory_failure() of a page of a flagged order-2 folio whose last
 * reference goes after PG_hwpoison is set: the retry of its page lookup
 * frees the queued folio (after a grace period since that put) and takes
 * the poisoned page off the buddy allocator, so it returns 0 with the page
 * poisoned and held.  Left queued, the folio would be handed out again,
 * poisoned page and all.  memory_failure() runs on another CPU; this one
 * keeps a page in its LRU batch with preemption off, so the lookup, which
 * retries an unhandlable page after lru_add_drain_all(), cannot retry
 * before this thread has dropped the folio.
 */
static void rcu_free_poison_queued_during_lookup(struct kunit *test)
{
	bool held, seen_poison, poisoned, buddy;
	unsigned long *left_poisoned, deadline;
	struct task_struct *task;
	struct mf_call *call;
	unsigned int freed;
	struct folio *folio;
	struct file *batch;
	struct page *page;
	int count;

	require_memory_failure(test);
	call = mf_call_setup(test, &left_poisoned);
	batch = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL),
			      "lru_batch");
	folio = folio_alloc(GFP_KERNEL, 2);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_set_rcu_free(folio);
	page = folio_page(folio, 1);
	call->pfn = page_to_pfn(page);
	held = rfk_hold(test, "that memory_failure() freed the queued folio");

	migrate_disable();
	task = mf_call_thread(call);
	if (IS_ERR(task)) {
		migrate_enable();
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	if (!lru_batch_pending(test, batch)) {
		migrate_enable();
		folio_put(folio);
		kthread_stop(task);
		kunit_skip(test,
			   "machine: this CPU's LRU batch was drained before it could be held, 8 times");
	}
	*left_poisoned = call->pfn;
	wake_up_process(task);
	deadline = jiffies + 10 * HZ;
	while (!(seen_poison = PageHWPoison(page)) &&
	       !completion_done(&call->done) && time_before(jiffies, deadline))
		cpu_relax();
	rfk_watch(test, &folio->page);
	folio_put(folio);
	preempt_enable();
	migrate_enable();
	wait_for_completion(&call->done);

	freed = rfk_check_freed(test, "memory_failure");
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	if (!call->ret && poisoned && count == 1) {
		KUNIT_EXPECT_EQ(test, unpoison_memory(call->pfn), 0);
		*left_poisoned = 0;
	}

	KUNIT_EXPECT_TRUE_MSG(test, seen_poison, "PG_hwpoison never set");
	KUNIT_EXPECT_EQ_MSG(test, call->ret, 0,
			    "memory_failure() failed on the queued folio");
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	if (held)
		KUNIT_EXPECT_EQ_MSG(test, freed, 1,
				    "the folio still waits: memory_failure() left it queued");
}

/*
 * Spin with preemption off until @page is poisoned or @call is done (10 s
 * at most, a hang guard), reporting a quiescent state on each turn: the
 * memory_failure() of @call waits for a grace period before it sets
 * PG_hwpoison, and this CPU, which keeps a page in its LRU batch, cannot
 * schedule.  Whether the page was seen poisoned.
 */
static bool wait_poisoned_quiescent(struct page *page, struct mf_call *call)
{
	unsigned long deadline = jiffies + 10 * HZ;

	while (!PageHWPoison(page)) {
		if (completion_done(&call->done) ||
		    time_after(jiffies, deadline))
			return false;
		local_irq_disable();
		rcu_momentary_eqs();
		local_irq_enable();
		cpu_relax();
	}
	return true;
}

/*
 * memory_failure() of page 1 of a flagged order-2 folio whose last put
 * has frozen its refcount at 0, but which is queued only after
 * PG_hwpoison is set, while another page waits in its zone: the call's
 * look before PG_hwpoison frees what waits then (the folio is not among
 * it), and a retry of its page lookup must free the folio once it is
 * queued, and take the poisoned page off the buddy allocator: it returns
 * 0, the page poisoned and held, nothing left waiting.  Left queued, the
 * folio reaches the buddy allocator after its grace period, poisoned page
 * and all.  memory_failure() runs on another CPU; this one keeps a page
 * in its LRU batch with preemption off, so the first retry waits in
 * lru_add_drain_all() until the folio is queued.  Both pages are freed
 * inside a reader of the case's (the gate, rcu_free_gate.h, on the
 * call's CPU), which leaves only while the call is seen in a wait for a
 * grace period: the other page still waits at the first look, which must
 * free it, and the folio at the retries, hook or not.  The gate never
 * ends a section by its hang guard.
 */
static void rcu_free_poison_queued_after_sync(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	bool seen_poison, synced_first, poisoned, buddy, waits, buddy_later;
	bool gate_in, hung;
	unsigned long *left_poisoned;
	struct task_struct *task;
	long waiting0, waiting;
	struct rfg_gate *gate;
	struct mf_call *call;
	struct folio *folio;
	struct page *page, *other;
	unsigned int gate_waits;
	struct file *batch;
	int count;

	require_memory_failure(test);
	call = mf_call_setup(test, &left_poisoned);
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS))
		kunit_skip(test,
			   "config: CONFIG_STACKTRACE or CONFIG_KALLSYMS is off: the reader cannot see memory_failure() wait");
	batch = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL),
			      "lru_batch");
	other = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	folio = folio_alloc(GFP_KERNEL, 2);
	if (!folio)
		put_page(other);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	if (page_zone(other) != folio_zone(folio)) {
		put_page(other);
		folio_put(folio);
		kunit_skip(test,
			   "machine: the order-2 folio and the page came from different zones");
	}
	folio_set_rcu_free(folio);
	page = folio_page(folio, 1);
	call->pfn = page_to_pfn(page);
	waiting0 = zone_stat_sum(nr_free_rcu);
	/* The last put, up to the folio's free */
	KUNIT_ASSERT_TRUE(test, folio_ref_freeze(folio, 1));

	migrate_disable();
	task = mf_call_thread(call);
	if (IS_ERR(task)) {
		migrate_enable();
		folio_ref_unfreeze(folio, 1);
		folio_put(folio);
		put_page(other);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	/* Not let out by the call's lru_add_drain_all(), which waits here */
	gate = rfg_start_for(test, task, false,
			     "that the pages wait when memory_failure() looks");
	rfk_put_flagged(test, other);
	if (!lru_batch_pending(test, batch)) {
		migrate_enable();
		folio_ref_unfreeze(folio, 1);
		folio_put(folio);
		kthread_stop(task);
		kunit_skip(test,
			   "machine: this CPU's LRU batch was drained before it could be held, 8 times");
	}
	*left_poisoned = call->pfn;
	wake_up_process(task);
	seen_poison = wait_poisoned_quiescent(page, call);
	synced_first = !folio_test_rcu_free(page_folio(other));
	/* Back inside once the first sync's wait is over (10 s: a hang) */
	gate_in = rfg_inside_quiescent(gate, 10 * HZ);
	/* The rest of the free: the folio is queued */
	rfk_watch(test, &folio->page);
	folio_ref_unfreeze(folio, 1);
	folio_put(folio);
	preempt_enable();
	migrate_enable();
	wait_for_completion(&call->done);
	rfg_stop(gate, &gate_waits, &hung);

	rfk_check_freed(test, "memory_failure");
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	waits = folio_test_rcu_free(folio);
	waiting = rfk_zone_stat_settle(NULL, nr_free_rcu, waiting0);
	if (!call->ret && poisoned && count == 1) {
		KUNIT_EXPECT_EQ(test, unpoison_memory(call->pfn), 0);
		*left_poisoned = 0;
	}
	/* What a folio left queued does after its grace period */
	rfk_wait_watched(test, "the grace-period work");
	drain_all_pages(page_zone(page));
	buddy_later = *left_poisoned && PageHWPoison(page) &&
		      is_free_buddy_page(page);
	kunit_info(test, "memory_failure() let the reader out %u times",
		   gate_waits);

	KUNIT_EXPECT_FALSE_MSG(test, hung,
			       "the reader ended by its 10 s hang guard: memory_failure() blocked, not in a grace-period wait");
	KUNIT_EXPECT_TRUE_MSG(test, gate_in,
			      "the reader not back inside in 10 s when the folio was queued");
	KUNIT_EXPECT_TRUE_MSG(test, seen_poison, "PG_hwpoison never set");
	KUNIT_EXPECT_TRUE_MSG(test, synced_first,
			      "memory_failure() did not free what waited before PG_hwpoison was set");
	KUNIT_EXPECT_EQ_MSG(test, call->ret, 0,
			    "memory_failure() failed on the folio queued after its sync");
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_FALSE_MSG(test, waits,
			       "the folio still waits: memory_failure() left it queued");
	KUNIT_EXPECT_EQ_MSG(test, waiting, waiting0,
			    "nr_free_rcu: still counted as waiting");
	KUNIT_EXPECT_FALSE_MSG(test, buddy_later,
			       "the poisoned page reached the buddy allocator after the grace period");
}

/*
 * memory_failure() of a page already poisoned by an earlier call that
 * could not handle its order-2 folio (in use, on no LRU), once the folio
 * was freed flagged: the call frees the queued folio (after a grace
 * period since its put) and keeps the poisoned page out of the allocator,
 * taken off the buddy allocator with one reference.  Left queued, the
 * folio would reach the buddy allocator, poisoned page and all.
 */
static void rcu_free_poison_poisoned_page_of_queued_folio(struct kunit *test)
{
	unsigned long *left_poisoned, pfn;
	bool held, poisoned, buddy;
	int first, second, count;
	struct folio *folio;
	unsigned int freed;
	struct page *page;

	require_memory_failure(test);
	left_poisoned = kunit_kzalloc(test, sizeof(*left_poisoned), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, left_poisoned);
	/* Runs after the exit has let a folio left queued go */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unpoison_pfn,
							left_poisoned), 0);
	folio = folio_alloc(GFP_KERNEL, 2);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	page = folio_page(folio, 1);
	pfn = page_to_pfn(page);
	*left_poisoned = pfn;
	first = memory_failure(pfn, MF_SW_SIMULATED);
	if (!PageHWPoison(page)) {
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test,
				     "memory_failure() of a folio in use left it unpoisoned (%d)",
				     first);
	}

	held = rfk_hold(test, "that the call freed the queued folio");
	folio_set_rcu_free(folio);
	rfk_watch(test, &folio->page);
	folio_put(folio);
	second = memory_failure(pfn, MF_SW_SIMULATED);
	freed = rfk_check_freed(test, "memory_failure");
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	if (poisoned && count == 1) {
		KUNIT_EXPECT_EQ(test, unpoison_memory(pfn), 0);
		*left_poisoned = 0;
	}

	KUNIT_EXPECT_EQ(test, second, -EHWPOISON);
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	if (held)
		KUNIT_EXPECT_EQ_MSG(test, freed, 1,
				    "the folio still waits: memory_failure() left it queued");
}

/*
 * A one-page ramfs file whose folio is clean, on the LRU and flagged: what
 * soft offline invalidates.  ramfs keeps its folios dirty; clearing that
 * stands in for writeback.
 */
static struct file *cached_flagged_folio(struct kunit *test, const char *name,
					 struct folio **folio)
{
	struct vfsmount *mnt = mm_test_mount(test, "ramfs", NULL);
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;
	void *data;

	file = rfk_case_file(test, mnt, name);
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
 * Soft offline of a hot, clean page cache folio drops its last reference
 * and takes a hwpoison reference at once: the folio must not wait for a
 * grace period in between (nr_free_rcu unchanged), and its free after an
 * unpoison waits for one, once (a folio still queued would be added to a
 * list a second time).
 */
static void rcu_free_poison_offline_cached_then_unpoison(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	long waiting0, waiting_poisoned, waiting_unpoisoned;
	int ret, unpoisoned = -1, count;
	unsigned long *left_poisoned, pfn;
	struct folio *folio;
	bool poisoned, held;

	require_memory_failure(test);
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
	waiting0 = zone_stat_sum(nr_free_rcu);

	held = rfk_hold(test, "that the free after the unpoison still waits");
	ret = soft_offline_page(pfn, 0);
	poisoned = PageHWPoison(&folio->page);
	waiting_poisoned = zone_stat_sum(nr_free_rcu);
	count = page_count(&folio->page);
	/* An unpoison of a queued folio would corrupt the list: not then */
	if (poisoned && waiting_poisoned == waiting0) {
		/* The unpoison drops the hwpoison reference: the last put */
		rfk_watch(test, &folio->page);
		unpoisoned = unpoison_memory(pfn);
	}
	waiting_unpoisoned = zone_stat_sum(nr_free_rcu);

	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_TRUE(test, poisoned);
	KUNIT_EXPECT_EQ_MSG(test, waiting_poisoned, waiting0,
			    "queued with the hwpoison reference taken");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ(test, unpoisoned, 0);
	KUNIT_EXPECT_LE_MSG(test, waiting_unpoisoned, waiting0 + 1,
			    "the free after the unpoison queued it twice");
	if (held)
		KUNIT_EXPECT_EQ_MSG(test, waiting_unpoisoned, waiting0 + 1,
				    "the free after the unpoison did not wait once");
}

static struct kunit_case rcu_free_poison_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_poison_takes_waiting, poison_gen_params),
	KUNIT_CASE_PARAM(rcu_free_poison_waits_for_readers, reader_gen_params),
	KUNIT_CASE_PARAM(rcu_free_poison_again_waits_for_readers,
			 again_gen_params),
	KUNIT_CASE(rcu_free_poison_queued_during_lookup),
	KUNIT_CASE(rcu_free_poison_queued_after_sync),
	KUNIT_CASE(rcu_free_poison_poisoned_page_of_queued_folio),
	KUNIT_CASE(rcu_free_poison_offline_cached_then_unpoison),
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
