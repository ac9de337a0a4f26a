// SPDX-License-Identifier: GPL-2.0
/*
 * What the shmem_read suites share: see shmem_read_helpers.h.
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "lockless_read.h"
#include "shmem_read_helpers.h"

const struct shmem_lockless_mode shmem_lockless_modes[2] = {
	{ "lockless read off", false },
	{ "lockless read on", true },
};

void shmem_lockless_set(struct kunit *test, bool on)
{
	if (!lr_switch_exists(test)) {
		if (on)
			kunit_skip(test,
				   "not applied: no lockless_page_cache_read switch (rcu-free patch 18)");
		return;
	}
	lr_switch(test, on);
}

static int locked_read_fn(void *arg)
{
	struct shmem_locked_read *lr = arg;
	loff_t pos = lr->off;

	lr->ret = kernel_read(lr->file, lr->buf, lr->len, &pos);
	complete(&lr->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
	return 0;
}

static void locked_read_kvfree(void *buf)
{
	kvfree(buf);
}

static void locked_read_unlock(struct shmem_locked_read *lr)
{
	unsigned int i;

	if (!lr->locked)
		return;
	lr->locked = false;
	for (i = 0; i < lr->nr; i++)
		folio_unlock(lr->folios[i]);
}

/* However the case ends: the folios unlocked, the reader stopped */
static void locked_read_end(void *arg)
{
	struct shmem_locked_read *lr = arg;
	unsigned int i;

	locked_read_unlock(lr);
	if (lr->task)
		kthread_stop(lr->task);
	for (i = 0; i < lr->nr; i++)
		folio_put(lr->folios[i]);
}

struct shmem_locked_read *shmem_locked_read_start(struct kunit *test,
						  struct mm_kunit_file *kf,
						  const pgoff_t *idx,
						  unsigned int nr, loff_t off,
						  size_t len)
{
	struct shmem_locked_read *lr;
	struct task_struct *task;
	struct folio *folio;

	if (nr > SHMEM_LOCKED_MAX)
		return ERR_PTR(-EINVAL);
	lr = kunit_kzalloc(test, sizeof(*lr), GFP_KERNEL);
	if (!lr)
		return ERR_PTR(-ENOMEM);
	lr->buf = kvzalloc(len, GFP_KERNEL);
	if (!lr->buf || kunit_add_action_or_reset(test, locked_read_kvfree,
						  lr->buf))
		return ERR_PTR(-ENOMEM);
	lr->file = kf->file;
	lr->off = off;
	lr->len = len;
	init_completion(&lr->done);
	if (kunit_add_action_or_reset(test, locked_read_end, lr))
		return ERR_PTR(-ENOMEM);
	lr->locked = true;
	for (; lr->nr < nr; lr->nr++) {
		folio = filemap_lock_folio(kf->file->f_mapping, idx[lr->nr]);
		if (IS_ERR(folio)) {
			kunit_release_action(test, locked_read_end, lr);
			return ERR_CAST(folio);
		}
		lr->folios[lr->nr] = folio;
	}
	task = kthread_run(locked_read_fn, lr, "shmem_locked_read");
	if (IS_ERR(task)) {
		kunit_release_action(test, locked_read_end, lr);
		return ERR_CAST(task);
	}
	lr->task = task;
	return lr;
}

int shmem_locked_read_waits(struct shmem_locked_read *lr)
{
	unsigned long deadline = jiffies + 60 * HZ;
	unsigned int i;

	for (;;) {
		for (i = 0; i < lr->nr; i++)
			if (folio_test_waiters(lr->folios[i]))
				return 1;
		if (completion_done(&lr->done))
			return 0;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		schedule_timeout_uninterruptible(1);
	}
}

void shmem_locked_read_finish(struct shmem_locked_read *lr)
{
	locked_read_unlock(lr);
	wait_for_completion(&lr->done);
}
