/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the shmem_read suites share (shmem_read_helpers.c): the lockless
 * read off and on as a case parameter, and a read made while folios of
 * the file are locked, which tells from its outcome alone whether the
 * read looked them up through the batch (which does not take a folio
 * lock: it returns) or one at a time through shmem_get_folio() (which
 * does: it waits, as 7.3's read does).
 */
#ifndef MM_TESTS_SHMEM_READ_HELPERS_H
#define MM_TESTS_SHMEM_READ_HELPERS_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/types.h>

#include "mm_kunit_helpers.h"

/* ---- the lockless read off and on -------------------------------------- */

/*
 * The rcu-free series copies the folios it finds hot without references
 * before shmem's loop runs (filemap_read_rcu()), and a few reads make a
 * folio hot: with its lockless_page_cache_read switch on, most repeated
 * reads never reach the batch.  So the cases that read run twice: with
 * the switch off (every byte through shmem's loop and its batch) and on.
 */
struct shmem_lockless_mode {
	const char *name;
	bool on;
};

extern const struct shmem_lockless_mode shmem_lockless_modes[2];

/*
 * Set the switch as @on says, for the rest of the case.  A kernel without
 * it (7.3, or the series before rcu-free patch 18) has no lockless read:
 * "off" is what it does, and "on" skips, saying so.
 */
void shmem_lockless_set(struct kunit *test, bool on);

/* ---- a read while folios are locked --------------------------------------- */

#define SHMEM_LOCKED_MAX	4

/**
 * struct shmem_locked_read - a kernel_read() in a kthread while the case
 * holds the locks of up to %SHMEM_LOCKED_MAX folios of the file
 * @folios: the locked folios, referenced until the case ends
 * @nr: how many
 * @buf: the bytes read, from @off on
 * @ret: what kernel_read() returned, once @done
 */
struct shmem_locked_read {
	struct file *file;
	struct folio *folios[SHMEM_LOCKED_MAX];
	unsigned int nr;
	bool locked;
	struct task_struct *task;
	struct completion done;
	loff_t off;
	size_t len;
	u8 *buf;
	ssize_t ret;
};

/**
 * shmem_locked_read_start() - lock folios, then read while they are locked
 * @test: the case; an action unlocks, stops the reader and drops the
 *	references however it ends
 * @kf: the file
 * @idx: the indices of the folios to lock (folios that must exist)
 * @nr: how many, at most %SHMEM_LOCKED_MAX
 * @off: where the read starts
 * @len: its length
 *
 * Return: the read, started, or an ERR_PTR() (no folio at an index, or
 * setting up failed); nothing is left locked then.
 */
struct shmem_locked_read *shmem_locked_read_start(struct kunit *test,
						  struct mm_kunit_file *kf,
						  const pgoff_t *idx,
						  unsigned int nr, loff_t off,
						  size_t len);

/**
 * shmem_locked_read_waits() - did the read wait for a locked folio?
 * @lr: the read, its folios still locked
 *
 * The reader either ends up asleep on one of the locked folios
 * (PG_waiters set) or returns: waits for whichever comes first.  The
 * bound of 60 s only guards against a hang.
 *
 * Return: 1 when it sleeps on a locked folio, 0 when it returned first,
 * -ETIMEDOUT when neither happened (a hang).
 */
int shmem_locked_read_waits(struct shmem_locked_read *lr);

/* Unlock the folios and wait for the read to return */
void shmem_locked_read_finish(struct shmem_locked_read *lr);

#endif /* MM_TESTS_SHMEM_READ_HELPERS_H */
