/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a tmpfs read that races a cut of the file's tail may return: the
 * one rule of shmem_read_pins and shmem_read_race, written once here.
 *
 * A read makes no promise to be atomic against a truncate or a hole
 * punch.  For the pages that a cut removes while the read runs, it may
 * return their old bytes or zeroes: generic filemap_read() copies the
 * folios of its batch after a concurrent truncate on every filesystem,
 * and 7.3's tmpfs read copies the folio it holds.  What stays a bug:
 *
 * - a byte that was never in the file at that offset (a byte of another
 *   offset, of an earlier write, of memory reused for other data: a
 *   folio freed under the read and reallocated);
 * - old bytes from a cut that was complete before the read began (a hole
 *   punched, or a tail truncated, earlier reads as zeroes);
 * - a return past the i_size the read saw: once a truncation has shrunk
 *   the file, a read that had not reached the cut yet stops at it.
 */
#ifndef _MM_TESTS_SHMEM_READ_CUT_H
#define _MM_TESTS_SHMEM_READ_CUT_H

#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/types.h>

#include "mm_test_util.h"

/* How a case cuts off a file's tail from an offset on */
enum shmem_cut {
	SHMEM_CUT_SHRINK,	/* truncate down, then up to the old size */
	SHMEM_CUT_PUNCH,	/* punch a hole up to the end, size kept */
	SHMEM_CUT_TRUNCATE,	/* truncate down, the file left short */
};

struct shmem_cut_mode {
	const char *name;	/* one word, as KTAP names a parameter */
	enum shmem_cut cut;
};

/* Every way, for KUNIT_ARRAY_PARAM_DESC(..., shmem_cut_modes, name) */
static const struct shmem_cut_mode shmem_cut_modes[] = {
	{ "truncate-shrink-regrow", SHMEM_CUT_SHRINK },
	{ "punch-hole", SHMEM_CUT_PUNCH },
	{ "truncate-down", SHMEM_CUT_TRUNCATE },
};

/* When the read ran, relative to the cut */
enum shmem_cut_when {
	SHMEM_CUT_AFTER_READ,	/* the read returned before the cut began */
	SHMEM_CUT_DURING_READ,	/* the cut began or ended while it ran */
	SHMEM_CUT_BEFORE_READ,	/* the cut was complete when it began */
};

/**
 * struct shmem_cut_read - one read of a file racing a cut of its tail
 * @cut: the first byte the cut removes
 * @size: the file's size before the cut
 * @head_seed: mm_test_pattern() seed of the bytes below @cut
 * @tail_seed: seed of the bytes from @cut on before the cut
 * @when: when the read ran, relative to the cut
 * @mode: how the file was cut
 * @max_ret: with %SHMEM_CUT_TRUNCATE during the read, the most it may
 *	return: the end of the page it was copying when the cut began (a
 *	copy started before the new size was set may finish); 0 for @size
 */
struct shmem_cut_read {
	loff_t cut, size;
	u8 head_seed, tail_seed;
	enum shmem_cut_when when;
	enum shmem_cut mode;
	loff_t max_ret;
};

/* What shmem_cut_judge() found wrong: the first bad byte or the return */
struct shmem_cut_bad {
	loff_t off;		/* -1: the return value is wrong */
	u8 got, want;		/* want: the old byte (0 is allowed too if @zero_ok) */
	bool zero_ok;
	ssize_t ret;
	loff_t min_ret, max_ret;
};

/**
 * shmem_cut_judge() - judge a read of a whole file that raced a cut
 * @rd: the read and the cut
 * @got: the bytes it returned
 * @ret: what it returned
 * @bad: set to the first thing wrong when it returns false
 *
 * A read of [0, @rd->size) returns below @rd->cut the head's bytes.  From
 * @rd->cut on it returns the tail's old bytes if it ended before the cut
 * began, zeroes if it began after the cut was complete, and either, byte
 * by byte, if the two overlapped.  It returns @rd->size bytes, except
 * after a truncation that left the file short (%SHMEM_CUT_TRUNCATE):
 * then exactly @rd->cut if it began after it, and between @rd->cut and
 * @rd->max_ret if they overlapped; one that overlapped a truncation down
 * and up again (%SHMEM_CUT_SHRINK) may have stopped at the size between
 * the two: between @rd->cut and @rd->size.
 *
 * Return: true when the read kept the rule.
 */
static inline bool shmem_cut_judge(const struct shmem_cut_read *rd,
				   const u8 *got, ssize_t ret,
				   struct shmem_cut_bad *bad)
{
	loff_t min_ret = rd->size, max_ret = rd->size, i;

	if (rd->mode == SHMEM_CUT_TRUNCATE) {
		if (rd->when == SHMEM_CUT_BEFORE_READ) {
			min_ret = rd->cut;
			max_ret = rd->cut;
		} else if (rd->when == SHMEM_CUT_DURING_READ) {
			min_ret = rd->cut;
			max_ret = rd->max_ret ?: rd->size;
		}
	} else if (rd->mode == SHMEM_CUT_SHRINK &&
		   rd->when == SHMEM_CUT_DURING_READ) {
		/* it may have seen the size between the two truncations */
		min_ret = rd->cut;
	}
	bad->ret = ret;
	bad->min_ret = min_ret;
	bad->max_ret = max_ret;
	if (ret < min_ret || ret > max_ret) {
		bad->off = -1;
		return false;
	}
	for (i = 0; i < ret; i++) {
		bool tail = i >= rd->cut;
		u8 want = mm_test_pattern(i, tail ? rd->tail_seed :
					  rd->head_seed);
		bool zero_ok = tail && rd->when != SHMEM_CUT_AFTER_READ;
		bool old_ok = !tail || rd->when != SHMEM_CUT_BEFORE_READ;

		if ((old_ok && got[i] == want) || (zero_ok && !got[i]))
			continue;
		bad->off = i;
		bad->got = got[i];
		bad->want = old_ok ? want : 0;
		bad->zero_ok = zero_ok && old_ok;
		return false;
	}
	return true;
}

/* One line for KUNIT_FAIL(): "%s" of what shmem_cut_judge() found */
static inline void shmem_cut_bad_str(const struct shmem_cut_bad *bad,
				     char *buf, size_t len)
{
	if (bad->off < 0)
		snprintf(buf, len, "the read returned %zd, want %lld..%lld",
			 bad->ret, bad->min_ret, bad->max_ret);
	else
		snprintf(buf, len, "byte at file offset %lld is %#x, want %#x%s",
			 bad->off, bad->got, bad->want,
			 bad->zero_ok ? " or 0" : "");
}

/**
 * shmem_cut_file() - cut a file's tail from @from on, as @cut says
 * @file: the tmpfs file
 * @from: the first byte to remove
 * @size: the file's size (a shrink truncates up to it again)
 * @cut: how
 *
 * Return: 0 or a negative errno.
 */
static inline int shmem_cut_file(struct file *file, loff_t from, loff_t size,
				 enum shmem_cut cut)
{
	int ret;

	if (cut == SHMEM_CUT_PUNCH)
		return vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE |
				     FALLOC_FL_KEEP_SIZE, from, size - from);
	ret = vfs_truncate(&file->f_path, from);
	if (ret || cut == SHMEM_CUT_TRUNCATE)
		return ret;
	return vfs_truncate(&file->f_path, size);
}

/* The marker shmem_cut_reuse() fills pages with: never a byte of a file */
#define SHMEM_CUT_REUSE_BYTE	0xee
#define SHMEM_CUT_REUSE_PAGES	256

/**
 * shmem_cut_reuse() - reuse the pages a cut has just freed, for other data
 * @pages: SHMEM_CUT_REUSE_PAGES slots, set to the pages taken (NULL where
 *	none could be had); give them back with shmem_cut_unreuse()
 *
 * Called right after a cut, on the CPU that cut: the folios the cut freed
 * are at the head of that CPU's free lists, so these allocations get them
 * back and fill them with %SHMEM_CUT_REUSE_BYTE.  A read that went on
 * copying from a folio it held no reference on returns that byte, which
 * no page of a file holds at every byte (mm_test_pattern() varies byte
 * by byte): the rule's "never in the file" catches it.
 */
static inline void shmem_cut_reuse(struct page **pages)
{
	unsigned int i;

	for (i = 0; i < SHMEM_CUT_REUSE_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (pages[i])
			memset(page_address(pages[i]), SHMEM_CUT_REUSE_BYTE,
			       PAGE_SIZE);
	}
}

/* Free the pages shmem_cut_reuse() took */
static inline void shmem_cut_unreuse(struct page **pages)
{
	unsigned int i;

	for (i = 0; i < SHMEM_CUT_REUSE_PAGES; i++)
		if (pages[i])
			__free_page(pages[i]);
}

#endif /* _MM_TESTS_SHMEM_READ_CUT_H */
