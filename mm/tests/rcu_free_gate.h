/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reader that holds grace periods back for the rcu_free_drain,
 * _compaction, _contig and _poison cases where the hold (rcu_free_hold(),
 * a test hook) is absent (rcu_free_gate_helpers.c).
 *
 * The gate is a kthread on another CPU that sits inside rcu_read_lock()
 * for as long as the case's task (its target; or the thread of the case's
 * that runs the path under test) is not itself waiting for a grace
 * period: it leaves its section once the target is seen asleep in a
 * synchronize_rcu*() or *wait_rcu_gp() wait (its stack), and enters a new
 * one once the target is no longer in that wait.  So a page the case's
 * task frees flagged while the gate is inside cannot come back by a
 * normal grace period before the path under test has taken it off the
 * lists and waits for a grace period of its own: only a path that frees
 * the waiting pages early gives it back, as with the hold.  Unlike a
 * reader of the case's own, the gate does not stall the path under test,
 * whose wait it lets end.
 */
#ifndef MM_TESTS_RCU_FREE_GATE_H
#define MM_TESTS_RCU_FREE_GATE_H

#include <kunit/test.h>
#include <linux/sched.h>

struct rfg_gate;

/*
 * Start a gate for the current task; NULL, logging that @part is not
 * checked, on a machine with one CPU or a kernel that cannot show a
 * task's stack.  The gate is inside its first section when this
 * returns; the case's action stops it.
 */
struct rfg_gate *rfg_start(struct kunit *test, const char *part);
/*
 * rfg_start() with @target in place of the current task: another thread
 * of the case's that runs the path under test (created, woken or not),
 * and without @barrier only a synchronize_rcu*() or *wait_rcu_gp() wait
 * of it lets the gate out, not a flush_work() or rcu_barrier*() (which
 * rfg_start() counts: a flushed struct rcu_work waits for its grace
 * period).  Called with the current task free to migrate; the gate is on
 * a CPU other than the one it runs on.
 */
struct rfg_gate *rfg_start_for(struct kunit *test, struct task_struct *target,
			       bool barrier, const char *part);
/*
 * Keep what the case frees from now on waiting until a path under test
 * frees it: the hold (rfk_hold()) where the hook is, NULL returned; else
 * a gate.  Skips the case whole, naming the hook, with neither.
 */
struct rfg_gate *rfg_hold(struct kunit *test, const char *part);
/*
 * Wait until the gate is inside a section again (it enters one as soon as
 * the target leaves a grace-period wait): for a task about to free pages
 * that must wait.  False if the gate has stopped (or is NULL).
 */
bool rfg_inside(struct rfg_gate *gate);
/*
 * rfg_inside() for a task that keeps preemption off: it reports a
 * quiescent state on each turn, so that the wait of the target the gate
 * is out for can end, and gives up after @timeout (a hang guard).
 */
bool rfg_inside_quiescent(struct rfg_gate *gate, unsigned long timeout);
/*
 * Stop the gate (NULL: none, nothing seen); what it saw: the times it
 * let a grace-period wait of the target end, and whether a section ended
 * by its hang guard (10 s inside without the target waiting).
 */
void rfg_stop(struct rfg_gate *gate, unsigned int *waits, bool *hung);

#endif /* MM_TESTS_RCU_FREE_GATE_H */
