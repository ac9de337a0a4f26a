// SPDX-License-Identifier: GPL-2.0
/*
 * The gate of the rcu_free_* cases (rcu_free_gate.h says what it does):
 * built once with the rcu_free suites.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/string.h>

#include "rcu_free_gate.h"
#include "rcu_free_helpers.h"

struct rfg_gate {
	struct task_struct *thread, *target;
	struct completion done;
	bool inside;		/* READ/WRITE_ONCE */
	bool stop;
	bool hung;
	/* A flush_work() or rcu_barrier*() of the target lets it out too */
	bool barrier;
	unsigned int waits;
};

/* Stopped, or the case's task is gone (a case that ended early) */
static bool rfg_done(struct rfg_gate *g)
{
	return READ_ONCE(g->stop) || (READ_ONCE(g->target->flags) & PF_EXITING);
}

static int rfg_fn(void *data)
{
	struct rfg_gate *g = data;
	unsigned long deadline;
	bool waits = false;

	while (!rfg_done(g)) {
		/* 10 s are a hang guard */
		deadline = jiffies + 10 * HZ;
		waits = false;
		rcu_read_lock();
		WRITE_ONCE(g->inside, true);
		while (!rfg_done(g) &&
		       !(waits = rfk_in_gp_wait_any(g->target, g->barrier))) {
			if (time_after(jiffies, deadline)) {
				g->hung = true;
				break;
			}
			cpu_relax();
		}
		WRITE_ONCE(g->inside, false);
		rcu_read_unlock();
		if (!waits)
			break;
		g->waits++;
		/* Asleep meanwhile: a quiescent state for every flavour */
		while (!rfg_done(g) && rfk_in_gp_wait_any(g->target, g->barrier))
			usleep_range(20, 50);
	}
	WRITE_ONCE(g->stop, true);
	complete(&g->done);
	return 0;
}

static void rfg_end(struct rfg_gate *g)
{
	if (!g->thread)
		return;
	WRITE_ONCE(g->stop, true);
	wait_for_completion(&g->done);
	put_task_struct(g->thread);
	put_task_struct(g->target);
	g->thread = NULL;
}

static void rfg_action(void *data)
{
	rfg_end(data);
}

struct rfg_gate *rfg_start_for(struct kunit *test, struct task_struct *target,
			       bool barrier, const char *part)
{
	struct task_struct *task;
	struct rfg_gate *g;

	if (num_online_cpus() < 2) {
		kunit_info(test,
			   "machine: one CPU, no gate (a reader would stall the case): %s not checked",
			   part);
		return NULL;
	}
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS)) {
		kunit_info(test,
			   "config: CONFIG_STACKTRACE or CONFIG_KALLSYMS is off, no gate (it could not see the case wait): %s not checked",
			   part);
		return NULL;
	}
	g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g);
	init_completion(&g->done);
	g->target = get_task_struct(target);
	g->barrier = barrier;
	migrate_disable();
	task = kthread_create(rfg_fn, g, "rcu_free_gate");
	if (IS_ERR(task)) {
		migrate_enable();
		put_task_struct(g->target);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	kthread_bind(task, cpumask_any_but(cpu_online_mask, smp_processor_id()));
	migrate_enable();
	g->thread = get_task_struct(task);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rfg_action, g), 0);
	wake_up_process(task);
	KUNIT_ASSERT_TRUE_MSG(test, rfg_inside(g), "the gate never entered");
	return g;
}

struct rfg_gate *rfg_start(struct kunit *test, const char *part)
{
	return rfg_start_for(test, current, true, part);
}

struct rfg_gate *rfg_hold(struct kunit *test, const char *part)
{
	struct rfg_gate *gate;

	if (MM_HOOK(RCU_FREE_HOLD)) {
		rfk_hold(test, part);
		return NULL;
	}
	gate = rfg_start(test, part);
	if (!gate)
		kunit_skip(test,
			   "hook absent: rcu_free_hold() (CONFIG_DEBUG_PAGE_RCU_FREE), and no gate in its place: %s not checked",
			   part);
	return gate;
}

bool rfg_inside(struct rfg_gate *g)
{
	if (!g)
		return false;
	while (!READ_ONCE(g->inside)) {
		if (READ_ONCE(g->stop))
			return false;
		cpu_relax();
	}
	/* What the caller frees next is freed inside the gate's section */
	smp_mb();
	return true;
}

bool rfg_inside_quiescent(struct rfg_gate *g, unsigned long timeout)
{
	unsigned long deadline = jiffies + timeout;

	if (!g)
		return false;
	while (!READ_ONCE(g->inside)) {
		if (READ_ONCE(g->stop) || time_after(jiffies, deadline))
			return false;
		local_irq_disable();
		rcu_momentary_eqs();
		local_irq_enable();
		cpu_relax();
	}
	/* As in rfg_inside() */
	smp_mb();
	return true;
}

void rfg_stop(struct rfg_gate *g, unsigned int *waits, bool *hung)
{
	if (!g) {
		if (waits)
			*waits = 0;
		if (hung)
			*hung = false;
		return;
	}
	rfg_end(g);
	if (waits)
		*waits = g->waits;
	if (hung)
		*hung = g->hung;
}
