// SPDX-License-Identifier: GPL-2.0
/*
 * A truncation racing tmpfs reads (suite shmem_read_race): a reader
 * kthread reads a file in a loop while the case cuts off its tail and
 * writes it back, thousands of times, and judges every byte it read.
 * And migration or swap-out of the file's folios racing reads through
 * shmem's batch (the lockless read off): every byte equals the file.
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
#include <linux/swap.h>
#include <linux/wait.h>

#include "mm_kunit_helpers.h"
#include "mm_test_util.h"
#include "shmem_read_cut.h"
#include "shmem_read_helpers.h"

#define SZ_PAGE		PAGE_SIZE

/* ---- truncation racing reads ------------------------------------------ */

#define RACE_PAGES	16
#define RACE_CUT	(10 * SZ_PAGE + 100)
#define RACE_ROUNDS	2000

/* make mutate's race runs take fewer (shmem_read_race_kunit.rounds=N) */
static int race_rounds = RACE_ROUNDS;
module_param_named(rounds, race_rounds, int, 0444);
MODULE_PARM_DESC(rounds, "truncation rounds of the truncation race case");

/*
 * Rounds go on past race_rounds, up to this many, until a read has
 * overlapped a cut: reads done without folio references (rcu-free) never
 * wait for the truncation, so they overlap one rarely.  The cap is that of
 * the default rounds (make test's 40 000) whatever rounds= says: a small
 * rounds= (make mutate's) ends sooner once a read has overlapped, never
 * gives up sooner on finding one.
 */
#define RACE_MAX_ROUNDS	max(20 * RACE_ROUNDS, race_rounds)
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
 * writes it back with a new seed, race_rounds times (more, up to
 * RACE_MAX_ROUNDS, until a read overlapped a cut); every read keeps
 * shmem_read_cut.h's rule (race_judge()).  Bounded by the round count;
 * reads are counted.  Slow (up to 40 000 rounds; shmem_read_race_kunit.rounds=N
 * on the command line sets the 2000): make test runs it in its races stage.  It needs a
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
	if (race_rounds < 1)
		kunit_skip(test, "config: shmem_read_race_kunit.rounds=%d, no round to run",
			   race_rounds);

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

	for (round = 0; (round < race_rounds || !rc->overlapped) &&
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

/* ---- folios moved under batched reads ---------------------------------- */

#define MOVE_PAGES	16
#define MOVE_SEED	23
/*
 * Passes over the file's folios, each followed by a read; more, up to the
 * max, until enough reads overlapped a move
 */
#define MOVE_ROUNDS	300
#define MOVE_MAX_ROUNDS	(10 * MOVE_ROUNDS)
#define MOVE_OVERLAPS	50

/* What moves the folios: a migration, or a reclaim that swaps them out */
struct move_mode {
	const char *name;
	bool (*move)(struct folio *folio);
	bool swap;
};

static const struct move_mode move_modes[] = {
	{ "migration", mm_kunit_migrate_folio, false },
	{ "swap-out", mm_kunit_reclaim_folio, true },
};

KUNIT_ARRAY_PARAM_DESC(move, move_modes, name);

struct move_race {
	struct mm_kunit_file *sf;
	u8 *buf;
	atomic_t moves;		/* folios moved so far */
	atomic_long_t reads;	/* reads done so far */
	wait_queue_head_t wq;	/* woken after each read */
	unsigned long overlapped, bad;
	ssize_t bad_ret;	/* what the first bad read returned */
	loff_t bad_off;		/* its first wrong byte, if it returned all */
	u8 got, want;
	struct task_struct *reader;
	struct completion exited;
};

/* Judge one read of the whole file: all of it, byte for byte */
static void move_judge(struct move_race *mr, ssize_t n)
{
	size_t size = mr->sf->size, i;

	if (n == size && !memcmp(mr->buf, mr->sf->want, size))
		return;
	if (mr->bad++)
		return;
	mr->bad_ret = n;
	if (n != size)
		return;
	for (i = 0; mr->buf[i] == mr->sf->want[i]; i++)
		;
	mr->bad_off = i;
	mr->got = mr->buf[i];
	mr->want = mr->sf->want[i];
}

/*
 * The whole file into mr->buf, in one read or (@by_page) a read a page,
 * each the last page of its read, looked up alone: what it returned in
 * all, up to the first short read.
 */
static ssize_t move_read_file(struct move_race *mr, bool by_page)
{
	size_t chunk = by_page ? PAGE_SIZE : mr->sf->size;
	loff_t pos = 0;
	ssize_t n;

	do {
		n = kernel_read(mr->sf->file, mr->buf + pos, chunk, &pos);
	} while (n == chunk && pos < mr->sf->size);
	return n < 0 ? n : pos;
}

/*
 * Read the whole file in a loop (nothing writes it), in one read and a
 * page at a time by turns; a read during which a move completed
 * overlapped one.
 */
static int move_reader(void *arg)
{
	struct move_race *mr = arg;
	bool by_page = false;

	while (!kthread_should_stop()) {
		int m0 = atomic_read(&mr->moves);
		ssize_t n = move_read_file(mr, by_page);

		by_page = !by_page;

		if (atomic_read(&mr->moves) != m0)
			mr->overlapped++;
		move_judge(mr, n);
		atomic_long_inc(&mr->reads);
		wake_up(&mr->wq);
		cond_resched();
	}
	complete(&mr->exited);
	return 0;
}

static void move_stop_reader(void *arg)
{
	struct move_race *mr = arg;

	kthread_stop(mr->reader);
	wait_for_completion(&mr->exited);
	put_task_struct(mr->reader);
}

/*
 * Migration or swap-out of a tmpfs file's folios while a reader kthread
 * reads the whole file in a loop with the lockless read off, so through
 * shmem's batch of folio references: a moved folio's new copy is put in
 * its slot locked and not yet uptodate, a swapped-out one leaves a swap
 * entry, and a folio the batch holds cannot move.  The file is read whole
 * and a page at a time by turns (a one-page read looks its page up
 * alone).  Every read returns the file, byte for byte (nothing writes
 * it).  Each pass over the folios is
 * followed by a read begun after it, which swaps back in what was swapped
 * out; passes go on until MOVE_ROUNDS are done and MOVE_OVERLAPS reads
 * overlapped a move (up to MOVE_MAX_ROUNDS; fewer overlaps fail: the race
 * was not exercised).  30 s without a read is a hang.
 * Slow: make test runs it in its races stage.  Needs a second CPU.
 */
static void shmem_read_move_race_exact_bytes(struct kunit *test)
{
	const struct move_mode *c = test->param_value;
	struct move_race *mr;
	struct task_struct *task;
	unsigned long moved = 0, busy = 0;
	struct folio *folio;
	pgoff_t index;
	int round;

	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs for the reader to overlap a move, %u online",
			   num_online_cpus());
	if (c->swap)
		mm_kunit_need_swap(test);
	shmem_lockless_set(test, false);
	mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->sf = mm_kunit_file_create(test, "never", MOVE_PAGES * SZ_PAGE);
	mm_kunit_file_write(test, mr->sf, 0, mr->sf->size, MOVE_SEED);
	mr->buf = kunit_kmalloc(test, mr->sf->size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr->buf);
	init_completion(&mr->exited);
	init_waitqueue_head(&mr->wq);

	task = kthread_run(move_reader, mr, "shmem_move_race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	mr->reader = task;
	mm_kunit_defer(test, move_stop_reader, mr);

	for (round = 0; (round < MOVE_ROUNDS || mr->overlapped < MOVE_OVERLAPS) &&
	     round < MOVE_MAX_ROUNDS && !mr->bad; round++) {
		long reads = atomic_long_read(&mr->reads);

		/* Folios the reads brought back in are on the LRU, to isolate */
		lru_add_drain_all();
		for (index = 0; index < MOVE_PAGES; index++) {
			folio = mm_kunit_isolate_folio(mr->sf, index);
			if (!folio) {
				busy++;
				continue;
			}
			if (c->move(folio)) {
				moved++;
				atomic_inc(&mr->moves);
			}
		}
		/* A read after the moves: it brings swapped-out pages back */
		if (!wait_event_timeout(mr->wq,
					atomic_long_read(&mr->reads) >= reads + 2,
					30 * HZ)) {
			KUNIT_FAIL(test, "reader made no progress in round %d",
				   round);
			break;
		}
	}
	kunit_release_action(test, move_stop_reader, mr);

	kunit_info(test, "%s: %d rounds, %lu folios moved, %lu not isolated, %ld reads, %lu overlapped a move, %lu bad",
		   c->name, round, moved, busy, atomic_long_read(&mr->reads),
		   mr->overlapped, mr->bad);
	if (mr->bad && mr->bad_ret != mr->sf->size)
		KUNIT_FAIL(test, "%lu bad reads, the first returned %zd of %lld bytes",
			   mr->bad, mr->bad_ret, mr->sf->size);
	else if (mr->bad)
		KUNIT_FAIL(test,
			   "%lu bad reads, the first: byte at file offset %lld is 0x%x, want 0x%x",
			   mr->bad, mr->bad_off, mr->got, mr->want);
	else
		KUNIT_EXPECT_GE_MSG(test, mr->overlapped,
				    (unsigned long)MOVE_OVERLAPS,
				    "%lu of %d reads needed overlapped a move: the race was not exercised",
				    mr->overlapped, MOVE_OVERLAPS);
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
	KUNIT_CASE_PARAM_ATTR(shmem_read_move_race_exact_bytes,
			      move_gen_params, { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite shmem_read_race_suite = {
	.name = "shmem_read_race",
	.init = shmem_read_race_test_init,
	.test_cases = shmem_read_race_cases,
};

kunit_test_suite(shmem_read_race_suite);

MODULE_DESCRIPTION("A truncation, migration or swap-out racing tmpfs reads (shmem-batch)");
MODULE_LICENSE("GPL");
