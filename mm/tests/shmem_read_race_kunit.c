// SPDX-License-Identifier: GPL-2.0
/*
 * A truncation racing tmpfs reads (suite shmem_read_race): a reader
 * kthread reads a file in a loop while the case cuts off its tail and
 * writes it back, thousands of times, and judges every byte it read.
 * KUNIT_CASE_SLOW, in a suite of its own so that make test's races stage
 * selects it by name ("*_race") next to lockless_read_race.  What a read
 * racing a cut may return is shmem_read_cut.h's rule, the same that
 * shmem_read_pins_cut_during_copy_no_stale_bytes in shmem_read_pins_kunit.c
 * applies to a read stalled at a known point of the cut.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>
#include <linux/wait.h>

#include "mm_kunit_helpers.h"
#include "mm_test_util.h"
#include "shmem_read_cut.h"

#define SZ_PAGE		PAGE_SIZE

/* ---- truncation racing reads ------------------------------------------ */

#define RACE_PAGES	16
#define RACE_CUT	(10 * SZ_PAGE + 100)
#define RACE_ROUNDS	2000
/*
 * Rounds go on past RACE_ROUNDS, up to this many, until a read has
 * overlapped a cut: reads done without folio references (rcu-free) never
 * wait for the truncation, so they overlap one rarely.
 */
#define RACE_MAX_ROUNDS	(20 * RACE_ROUNDS)
/* The seed of the whole file's first write: the head keeps it */
#define RACE_SEED	8

/*
 * The seed of the tail while round @round starts (full): the refill of
 * the round before it wrote it.  A seed per round, so that a byte of a
 * folio an earlier round cut off differs from the one written since.
 */
static u8 race_tail_seed(int round)
{
	return RACE_SEED + round % 240;
}

struct race {
	struct mm_kunit_file *sf;
	enum shmem_cut cut;
	atomic_t phase;		/* 4 * round + 0 full, 1 cutting, 2 cut, 3 refill */
	atomic_t judged_cut;	/* reads judged entirely inside phase 2 */
	wait_queue_head_t wq;
	u8 *buf;
	unsigned long reads, judged, overlapped, bad;
	struct shmem_cut_bad first_bad;
	struct task_struct *reader;
	struct completion exited;
};

/*
 * One read of the whole file, judged by shmem_read_cut.h's rule against
 * the phases it began and ended in: a read that ended in the full phase
 * ended before the cut began (this round's tail, not an earlier round's),
 * one that began in the cut phase began after the cut was complete
 * (zeroes from the cut on, or the short file), any other overlapped the
 * cut (old bytes or zeroes, byte by byte).  Reads overlapping the refill
 * are not judged.
 */
static void race_judge(struct race *rc, int p0, int p1, ssize_t n)
{
	struct shmem_cut_read rd = {
		.cut = RACE_CUT, .size = rc->sf->size,
		.head_seed = RACE_SEED, .tail_seed = race_tail_seed(p0 / 4),
		.mode = rc->cut, .when = SHMEM_CUT_DURING_READ,
	};
	struct shmem_cut_bad bad;

	if (p0 / 4 != p1 / 4 || p1 % 4 == 3 || n < 0)
		return;
	rc->judged++;
	if (p0 % 4 != p1 % 4)
		rc->overlapped++;
	if (p1 % 4 == 0)
		rd.when = SHMEM_CUT_AFTER_READ;
	else if (p0 % 4 == 2)
		rd.when = SHMEM_CUT_BEFORE_READ;
	if (!shmem_cut_judge(&rd, rc->buf, n, &bad) && !rc->bad++)
		rc->first_bad = bad;
	if (p0 % 4 == 2 && p1 % 4 == 2) {
		atomic_inc(&rc->judged_cut);
		wake_up(&rc->wq);
	}
}

static int race_reader(void *arg)
{
	struct race *rc = arg;

	while (!kthread_should_stop()) {
		loff_t pos = 0;
		int p0 = atomic_read_acquire(&rc->phase);
		ssize_t n = kernel_read(rc->sf->file, rc->buf, rc->sf->size,
					&pos);
		int p1 = atomic_read_acquire(&rc->phase);

		rc->reads++;
		race_judge(rc, p0, p1, n);
		cond_resched();
	}
	complete(&rc->exited);
	return 0;
}

/* Stop the reader; an action, so that a failed assertion stops it too. */
static void race_stop_reader(void *arg)
{
	struct race *rc = arg;

	kthread_stop(rc->reader);
	wait_for_completion(&rc->exited);
	put_task_struct(rc->reader);
}

static void race_cut(struct kunit *test, struct race *rc)
{
	KUNIT_ASSERT_EQ(test, shmem_cut_file(rc->sf->file, RACE_CUT,
					     rc->sf->size, rc->cut), 0);
}

KUNIT_ARRAY_PARAM_DESC(cut, shmem_cut_modes, name);

/*
 * A reader kthread reads the whole file in a loop while this thread cuts
 * off its tail (truncate down, down and up again, or punch a hole) and
 * writes it back with a new seed, RACE_ROUNDS times (more, up to
 * RACE_MAX_ROUNDS, until a read overlapped a cut); every read keeps
 * shmem_read_cut.h's rule (race_judge()).  Bounded by the round count;
 * reads are counted.  Slow (up to 40 000 rounds): make test runs it in its races stage.  It needs a
 * second CPU: on one, a non-preemptible kernel may never run the reader
 * in the middle of a cut.
 */
static void shmem_read_truncate_race_no_stale_bytes(struct kunit *test)
{
	const struct shmem_cut_mode *c = test->param_value;
	struct race *rc = test->priv;
	struct task_struct *task;
	int round, seen;
	char msg[96];

	if (num_online_cpus() < 2)
		kunit_skip(test, "machine: needs 2 CPUs for the reader to overlap a cut, %u online",
			   num_online_cpus());

	rc->cut = c->cut;
	rc->sf = mm_kunit_file_create(test, "never", RACE_PAGES * SZ_PAGE);
	mm_kunit_file_write(test, rc->sf, 0, rc->sf->size, RACE_SEED);
	rc->buf = kunit_kmalloc(test, rc->sf->size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rc->buf);
	init_waitqueue_head(&rc->wq);
	init_completion(&rc->exited);

	task = kthread_run(race_reader, rc, "shmem_read_race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	rc->reader = task;
	mm_kunit_defer(test, race_stop_reader, rc);

	for (round = 0; (round < RACE_ROUNDS || !rc->overlapped) &&
	     round < RACE_MAX_ROUNDS && !rc->bad; round++) {
		atomic_set_release(&rc->phase, 4 * round + 1);
		race_cut(test, rc);
		seen = atomic_read(&rc->judged_cut);
		atomic_set_release(&rc->phase, 4 * round + 2);
		/* let the reader judge at least one read of the cut file */
		if (!wait_event_timeout(rc->wq,
					atomic_read(&rc->judged_cut) != seen,
					30 * HZ)) {
			KUNIT_FAIL(test, "reader made no progress in round %d",
				   round);
			break;
		}
		atomic_set_release(&rc->phase, 4 * round + 3);
		mm_kunit_file_write(test, rc->sf, RACE_CUT,
				    rc->sf->size - RACE_CUT,
				    race_tail_seed(round + 1));
		atomic_set_release(&rc->phase, 4 * round + 4);
	}
	kunit_release_action(test, race_stop_reader, rc);

	kunit_info(test, "%s: %d rounds, %lu reads, %lu judged, %lu overlapped a cut, %lu bad",
		   c->name, round, rc->reads, rc->judged, rc->overlapped, rc->bad);
	if (rc->bad) {
		shmem_cut_bad_str(&rc->first_bad, msg, sizeof(msg));
		KUNIT_FAIL(test, "%lu bad reads, the first: %s", rc->bad, msg);
	}
	KUNIT_EXPECT_GT_MSG(test, rc->overlapped, 0,
			    "no read overlapped a cut: the race was not exercised");
}

/* The race state of a case (test->priv) */
static int shmem_read_race_test_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct race), GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

static struct kunit_case shmem_read_race_cases[] = {
	KUNIT_CASE_PARAM_ATTR(shmem_read_truncate_race_no_stale_bytes,
			      cut_gen_params, { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite shmem_read_race_suite = {
	.name = "shmem_read_race",
	.init = shmem_read_race_test_init,
	.test_cases = shmem_read_race_cases,
};

kunit_test_suite(shmem_read_race_suite);

MODULE_DESCRIPTION("A truncation racing tmpfs reads (shmem-batch)");
MODULE_LICENSE("GPL");
