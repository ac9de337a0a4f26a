/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine of the lockless_read_race suite (lockless_read_race_helpers.c):
 * two tagged files, reader kthreads that check every word they read, and
 * what a case's steps call to aim and record their changes.  The oracle
 * and what a case demands are described at the top of
 * lockless_read_race_kunit.c.
 */
#ifndef MM_TESTS_LOCKLESS_READ_RACE_H
#define MM_TESTS_LOCKLESS_READ_RACE_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/types.h>

#include "lockless_read.h"

/* Reads each case checks after its first change, unless booted with fewer */
#define RACE_READS		250000L
/* Hang guard only: a case that gets nowhere in this time fails */
#define RACE_GIVE_UP_SECS	300
#define RACE_FILES		2
#define RACE_FILE_SIZE		SZ_4M
#define RACE_PAGES		(RACE_FILE_SIZE >> PAGE_SHIFT)
#define RACE_PMD		(PAGE_SIZE << HPAGE_PMD_ORDER)
#define RACE_RANGE		SZ_64K
#define RACE_SMALL_READ		(4 * PAGE_SIZE)
#define RACE_LONG_READ		SZ_64K
#define RACE_MAX_READ		(SZ_1M + 4 * PAGE_SIZE)
#define RACE_LONG_EVERY		32
/* Pages one read can touch */
#define RACE_READ_PAGES		(RACE_MAX_READ / PAGE_SIZE + 2)
#define RACE_MAX_READERS	8
#define RACE_GEN_MASK		0xffffffu
#define RACE_TRUNC_RING		256
/*
 * Reads of the target ranges a step waits for, twice (with an LRU drain
 * between), in each round of its warm-up; the warm-up goes on until every
 * page of the ranges is flagged, or for RACE_WARM_JIFFIES
 */
#define RACE_WARM_READS		32
#define RACE_WARM_JIFFIES	(HZ / 5)
/* How long a step waits for a read of a range in progress before it changes it */
#define RACE_ALIGN_NS		(10 * NSEC_PER_MSEC)

/*
 * The word at @off (8-byte aligned) of file @file as generation @gen wrote
 * it: the file's id in the top byte (0xa1, 0xb2: not 0, not the 0xaa of
 * page poisoning), the generation in the next three, then 0x5a and the
 * word's offset / 8.
 */
static inline u64 race_tag(unsigned int file, loff_t off, u32 gen)
{
	return (u64)(0xa1 + 0x11 * file) << 56 |
	       (u64)(gen & RACE_GEN_MASK) << 32 | 0x5a000000u | (u32)(off >> 3);
}

struct race_file {
	struct mm_kunit_file *lf;	/* lf->want: the writer's buffer of tags */
	u32 cur[RACE_PAGES];	/* generation being written, or last written */
	u32 done[RACE_PAGES];	/* generation last written in full */
	/*
	 * Odd while a truncation is under way; the size it set is in
	 * trunc_size[trunc_seq / 2 % RACE_TRUNC_RING].
	 */
	unsigned long trunc_seq;
	loff_t trunc_size[RACE_TRUNC_RING];
	/* The range the next change is for: half the reads go there */
	loff_t target, target_len;
	/*
	 * The step's window (lr_window()): open while it changes its range,
	 * the window's hits when it opened, the steps that opened one and
	 * those during which a copy without a reference overlapped it.
	 */
	bool win_open;
	unsigned long win_hits, steps, raced;
	/*
	 * The window's hits when race_align() ended, right before the change
	 * of this file, and the steps whose copies overlapped the range after
	 * that: during the change itself
	 */
	unsigned long win_mark, raced_change;
	/* Readers inside a read that overlaps the target range */
	atomic_t copying;
	/* Changes that waited for such a read, and those that waited in vain */
	unsigned long aligns, align_missed;
};

enum race_bad_kind {
	RACE_BAD_FILE,		/* the other file's tag */
	RACE_BAD_OFFSET,	/* this file, another offset */
	RACE_BAD_OLD,		/* a generation older than one seen done */
	RACE_BAD_NEW,		/* a generation not yet being written */
	RACE_BAD_ZERO,		/* zero with no rewrite in progress */
	RACE_BAD_OTHER,		/* anything else: poison, garbage */
	RACE_BAD_KINDS
};

struct race {
	struct race_file f[RACE_FILES];
	u32 rnd;			/* the test thread's */
	u32 gen;
	atomic_long_t reads, long_reads, target_reads;
	atomic_long_t zero_words, torn_words, short_reads;
	atomic_long_t bad_words, bad_reads;
	atomic_long_t bad_kind[RACE_BAD_KINDS];
	char first_bad[200];		/* the first bad word */
	char first_short[160];		/* the first bad read */
	struct task_struct *readers[RACE_MAX_READERS];
	unsigned int nr_readers;
	/* The tracepoint is there: the steps' windows are counted */
	bool counted;
	/* race_wait_reads() calls, and those that ran out of time */
	unsigned long warm_waits, warm_timeouts;
	/* Warm-ups, and those that ended with pages of the ranges not flagged */
	unsigned long warm_ups, warm_cold;
};

/*
 * One change to the files, generation @gen (a rewrite writes it).
 * Returns how many changes happened (a split or a migration may be
 * refused while a reader holds a reference).
 */
typedef unsigned long (*race_step_t)(struct kunit *test, struct race *race,
				     u32 gen);

/* A xorshift step of @x: the cases' choices */
u32 race_rand(u32 *x);
/* Before a change of [@start, @end): zeroes may show there from now on */
void race_begin(struct race_file *rf, loff_t start, loff_t end,
		u32 gen);
/* Write generation @gen of [@start, @end) (whole pages) of @file */
void race_write(struct kunit *test, struct race *race,
		unsigned int file, loff_t start, loff_t end, u32 gen);
/* Before i_size goes down to @size, and after it is back at RACE_FILE_SIZE */
void race_trunc_open(struct race_file *rf, loff_t size);
void race_trunc_close(struct race_file *rf);
/* Send half the reads to a range of A and one of B until they are hot */
void race_target(struct race *race, loff_t a, loff_t alen, loff_t b,
		 loff_t blen);
/* Count the copies without references of [@start, @end) of file @f */
void race_window(struct kunit *test, struct race *race,
		 unsigned int f, loff_t start, loff_t end);
/* Before the step changes file @f: meet a read of its range in progress */
void race_align(struct kunit *test, struct race *race, unsigned int f);
/* The step is done: did a copy without a reference overlap its ranges? */
void race_window_close(struct kunit *test, struct race *race);
/*
 * Run @step over and over on A of @kind and B until the readers have
 * checked @reads reads after the first step, then judge; @seed 0
 * picks a new one.
 */
void race_run(struct kunit *test, enum mm_kunit_fs kind, const char *what,
	      race_step_t step, u32 seed, long reads);

#endif /* MM_TESTS_LOCKLESS_READ_RACE_H */
