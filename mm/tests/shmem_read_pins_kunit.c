// SPDX-License-Identifier: GPL-2.0
/*
 * A tmpfs read stalled in a fault of its user buffer, or on a folio lock
 * (suite shmem_read_pins): what it holds meanwhile, and what it copies
 * after.
 *
 * Strategy: the reader's user buffer is a private mapping of a test file
 * whose fault handler, on the first fault of one buffer page, stalls the
 * read: it lets a kthread act on the tmpfs file being read (cut its tail,
 * split, punch or migrate a folio the read has not reached) and waits for
 * the kthread to finish.  The stall is a state, not a time: the kthread
 * starts when the fault handler has been entered, with a long timeout only
 * as a hang guard.  The read then goes on; its bytes are compared with
 * what the file must read as, and what the kthread did is judged on its
 * outcome: the split's return value, whether a punched page left the page
 * cache, whether migration moved the folio.  7.3's read held a reference
 * on the folio being copied from and on no other across such a fault, so
 * these succeed there; a folio batch held across the fault makes them
 * fail.  A read through a kernel buffer, which cannot fault, is stalled
 * instead on the lock of a folio that is not uptodate, with its batch
 * held, while the tail is cut.  No test hook is used.
 */

#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/completion.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/swap.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "mm_kunit_helpers.h"
#include "mm_test_util.h"
#include "shmem_read_cut.h"

#define SZ_PAGE		PAGE_SIZE
#define PMD_BYTES	MM_KUNIT_PMD_BYTES
#define PMD_PAGES	(PMD_BYTES >> PAGE_SHIFT)

/* ---- a read stalled in a fault of its user buffer --------------------- */

struct stall {
	pgoff_t page;		/* the buffer page whose first fault stalls */
	bool stalled;		/* the fault handler was entered there */
	int (*act)(void *arg);	/* what the kthread does meanwhile */
	void *arg;
	int act_ret;		/* act()'s return, or -ETIMEDOUT */
	struct completion at_stall, resume, exited;
};

static vm_fault_t stall_fault(struct vm_fault *vmf)
{
	struct stall *st = vmf->vma->vm_file->private_data;
	struct page *page;

	if (vmf->pgoff == st->page && !st->stalled) {
		st->stalled = true;
		complete(&st->at_stall);
		wait_for_completion(&st->resume);
	}
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page)
		return VM_FAULT_OOM;
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct stall_vm_ops = {
	.fault = stall_fault,
};

static int stall_mmap_prepare(struct vm_area_desc *desc)
{
	desc->vm_ops = &stall_vm_ops;
	return 0;
}

static const struct file_operations stall_fops = {
	.mmap_prepare = stall_mmap_prepare,
};

static int stall_kthread(void *arg)
{
	struct stall *st = arg;

	if (wait_for_completion_timeout(&st->at_stall, 60 * HZ))
		st->act_ret = st->act(st->arg);
	else
		st->act_ret = -ETIMEDOUT;
	complete(&st->resume);
	complete(&st->exited);
	return 0;
}

/**
 * stalled_read() - read a file whole into a user buffer that stalls
 * @test: the case
 * @sf: the file, read from offset 0 up to its size
 * @page: the buffer page whose first fault stalls the read (the pages
 *	before it are faulted in first)
 * @act: run by a kthread while the read is stalled there, with @arg
 * @arg: passed to @act
 * @act_ret: set to what @act returned (-ETIMEDOUT: the read never
 *	stalled, -ENOEXEC: @act never ran)
 * @kbuf: @sf->size bytes, set to the bytes the read returned
 *
 * Return: what vfs_read() returned, or a negative errno when the buffer or
 * the kthread could not be set up (@act_ret then -ENOEXEC).  When the read
 * returned without a fault at @page, @act did not run: @act_ret is
 * -ETIMEDOUT.
 */
static ssize_t stalled_read(struct kunit *test, struct mm_kunit_file *sf,
			    pgoff_t page, int (*act)(void *arg), void *arg,
			    int *act_ret, u8 *kbuf)
{
	struct task_struct *task;
	struct file *bufile;
	struct stall *st;
	unsigned long ubuf;
	loff_t pos = 0;
	ssize_t n;

	*act_ret = -ENOEXEC;
	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	st->page = page;
	st->act = act;
	st->arg = arg;
	init_completion(&st->at_stall);
	init_completion(&st->resume);
	init_completion(&st->exited);

	bufile = anon_inode_getfile("shmem_read_stall", &stall_fops, st, O_RDWR);
	if (IS_ERR(bufile))
		return PTR_ERR(bufile);
	if (kunit_add_action_or_reset(test, mm_test_fput, bufile))
		return -ENOMEM;
	ubuf = kunit_vm_mmap(test, bufile, 0, sf->size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE, 0);
	if (!ubuf || IS_ERR_VALUE(ubuf))
		return ubuf ? (long)ubuf : -ENOMEM;

	/*
	 * The buffer pages before @page faulted in: a read copying with
	 * faults disabled first falls short at @page, in the copy of the
	 * file page that goes there
	 */
	if (fault_in_writeable((char __user *)ubuf, page * PAGE_SIZE))
		return -EFAULT;
	task = kthread_run(stall_kthread, st, "shmem_read_stall");
	if (IS_ERR(task))
		return PTR_ERR(task);
	n = vfs_read(sf->file, (char __user *)ubuf, sf->size, &pos);
	/* A read that never stalled: the kthread stops waiting */
	if (!st->stalled)
		complete(&st->at_stall);
	wait_for_completion(&st->exited);
	*act_ret = st->stalled ? st->act_ret : -ETIMEDOUT;
	if (n > 0 && copy_from_user(kbuf, (const void __user *)ubuf, n))
		return -EFAULT;
	return n;
}

/* A buffer for all of @sf's bytes, freed when the case ends */
static u8 *file_sized_buf(struct kunit *test, struct mm_kunit_file *sf)
{
	u8 *buf = vmalloc(sf->size);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	mm_kunit_defer(test, mm_kunit_vfree, buf);
	return buf;
}

/* ---- a cut while the read is stalled ----------------------------------- */

#define CUT_PAGES	16
#define CUT_AT		(10 * SZ_PAGE + 100)
#define CUT_SEED	9

KUNIT_ARRAY_PARAM_DESC(cut, shmem_cut_modes, name);

struct cut_arg {
	struct mm_kunit_file *sf;
	const char *name;	/* of the cut mode */
	enum shmem_cut cut;
	struct page *reused[SHMEM_CUT_REUSE_PAGES];
};

/* The pages the cut freed taken for other data, and given back */
static void cut_unreuse(void *arg)
{
	struct cut_arg *ca = arg;

	shmem_cut_unreuse(ca->reused);
}

/* Cut the tail, then reuse the freed pages at once, on the same CPU */
static int cut_act(void *arg)
{
	struct cut_arg *ca = arg;
	int ret = shmem_cut_file(ca->sf->file, CUT_AT, ca->sf->size, ca->cut);

	if (!ret)
		shmem_cut_reuse(ca->reused);
	return ret;
}

/**
 * cut_judge() - judge a read of the whole cut file by shmem_cut_judge()
 * @test: the case
 * @ca: the file and the cut
 * @when: when the read ran, relative to the cut
 * @max_ret: see struct shmem_cut_read
 * @got: the bytes the read returned
 * @ret: what it returned
 * @what: names the read in the failure
 */
static void cut_judge(struct kunit *test, struct cut_arg *ca,
		      enum shmem_cut_when when, loff_t max_ret, const u8 *got,
		      ssize_t ret, const char *what)
{
	const struct shmem_cut_read rd = {
		.cut = CUT_AT, .size = ca->sf->size,
		.head_seed = CUT_SEED, .tail_seed = CUT_SEED,
		.when = when, .mode = ca->cut, .max_ret = max_ret,
	};
	struct shmem_cut_bad bad;
	char msg[96];

	if (shmem_cut_judge(&rd, got, ret, &bad))
		return;
	shmem_cut_bad_str(&bad, msg, sizeof(msg));
	KUNIT_FAIL(test, "%s: %s: %s", ca->name, what, msg);
}

/* A file of CUT_PAGES written pages, with its cut and a buffer for a read */
static struct cut_arg *cut_setup(struct kunit *test,
				 const struct shmem_cut_mode *c, u8 **kbuf)
{
	struct cut_arg *ca = kunit_kzalloc(test, sizeof(*ca), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ca);
	ca->cut = c->cut;
	ca->name = c->name;
	ca->sf = mm_kunit_file_create(test, "never", CUT_PAGES * SZ_PAGE);
	mm_kunit_file_write(test, ca->sf, 0, ca->sf->size, CUT_SEED);
	mm_kunit_defer(test, cut_unreuse, ca);
	*kbuf = file_sized_buf(test, ca->sf);
	return ca;
}

/* A read that began after the cut: zeroes past it, or the short file */
static void cut_read_after(struct kunit *test, struct cut_arg *ca, u8 *kbuf)
{
	loff_t pos = 0;
	ssize_t n = kernel_read(ca->sf->file, kbuf, ca->sf->size, &pos);

	cut_judge(test, ca, SHMEM_CUT_BEFORE_READ, 0, kbuf, n,
		  "a read begun after the cut");
}

/*
 * A read stalled in the copy of the page holding the cut (in the fault of
 * the buffer page it is copied to; the buffer pages before are faulted in
 * already), while the tail is truncated (down, or down and up again) or
 * punched and the pages freed are reused at once for other data, returns
 * what shmem_read_cut.h allows: the pattern below the cut, old bytes or
 * zeroes for what the cut removed meanwhile, never bytes that were not in
 * the file (a freed folio copied from without a reference), and no more
 * than the page being copied when the file was left short.  A read begun
 * after the cut reads zeroes there, or stops at the cut.
 */
static void shmem_read_pins_cut_during_copy_no_stale_bytes(struct kunit *test)
{
	const struct shmem_cut_mode *c = test->param_value;
	struct cut_arg *ca;
	int act_ret;
	ssize_t n;
	u8 *kbuf;

	ca = cut_setup(test, c, &kbuf);
	n = stalled_read(test, ca->sf, CUT_AT >> PAGE_SHIFT, cut_act, ca,
			 &act_ret, kbuf);
	KUNIT_ASSERT_NE_MSG(test, act_ret, -ETIMEDOUT,
			    "the read never faulted on buffer page %lu",
			    (unsigned long)(CUT_AT >> PAGE_SHIFT));
	KUNIT_ASSERT_EQ_MSG(test, act_ret, 0, "cutting the tail failed");
	cut_judge(test, ca, SHMEM_CUT_DURING_READ,
		  round_up(CUT_AT, SZ_PAGE), kbuf, n, "the stalled read");
	cut_read_after(test, ca, kbuf);
}

/* ---- a cut while the read waits for a folio lock ------------------------ */

#define LOCKED_PAGE	3

struct lock_wait_read {
	struct mm_kunit_file *sf;
	u8 *buf;
	ssize_t ret;
	struct completion done;
};

static int lock_wait_reader(void *arg)
{
	struct lock_wait_read *lw = arg;
	loff_t pos = 0;

	lw->ret = kernel_read(lw->sf->file, lw->buf, lw->sf->size, &pos);
	complete(&lw->done);
	return 0;
}

/*
 * A read through a kernel buffer (kernel_read(), which does not fault)
 * that waits for the lock of a folio that is not uptodate, as migration
 * leaves one, while the tail past that folio is truncated (down, or down
 * and up again) or punched and the pages freed are reused at once for
 * other data, returns what shmem_read_cut.h allows: the folios past the
 * cut that its batch may hold are copied old or not at all, never after
 * their memory went to other data, and a read that finds the file
 * truncated before reaching the cut stops exactly there.  A read begun
 * after the cut reads zeroes there, or stops at the cut.
 */
static void shmem_read_pins_cut_during_lock_wait_no_stale_bytes(struct kunit *test)
{
	const struct shmem_cut_mode *c = test->param_value;
	const loff_t at = LOCKED_PAGE * SZ_PAGE;
	struct lock_wait_read *lw;
	struct task_struct *task;
	unsigned long deadline;
	struct folio *folio;
	struct cut_arg *ca;
	bool waited;
	u8 *kaddr;
	int cut_ret, i;

	lw = kunit_kzalloc(test, sizeof(*lw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lw);
	ca = cut_setup(test, c, &lw->buf);
	lw->sf = ca->sf;
	/* page LOCKED_PAGE fallocated: filled below, as migration would */
	KUNIT_ASSERT_EQ(test, vfs_fallocate(lw->sf->file, FALLOC_FL_PUNCH_HOLE |
					    FALLOC_FL_KEEP_SIZE, at, SZ_PAGE), 0);
	mm_kunit_file_falloc(test, lw->sf, at, SZ_PAGE);
	init_completion(&lw->done);

	folio = filemap_lock_folio(lw->sf->file->f_mapping, LOCKED_PAGE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	task = kthread_run(lock_wait_reader, lw, "shmem_read_lock_wait");
	if (IS_ERR(task)) {
		folio_unlock(folio);
		folio_put(folio);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(task));
		return;
	}
	/*
	 * The reader asleep on the folio (PG_waiters), or returned; the
	 * deadline only guards against a hang
	 */
	deadline = jiffies + 60 * HZ;
	while (!folio_test_waiters(folio) && !completion_done(&lw->done) &&
	       time_before(jiffies, deadline))
		schedule_timeout_uninterruptible(1);
	waited = folio_test_waiters(folio) && !completion_done(&lw->done);
	cut_ret = waited ? cut_act(ca) : 0;

	/* Filled and unlocked as migration would; no assert while locked */
	if (!folio_test_uptodate(folio)) {
		kaddr = kmap_local_folio(folio, 0);
		for (i = 0; i < SZ_PAGE; i++)
			kaddr[i] = mm_test_pattern(at + i, CUT_SEED);
		kunmap_local(kaddr);
		flush_dcache_folio(folio);
		folio_mark_uptodate(folio);
		folio_mark_dirty(folio);
	}
	folio_unlock(folio);
	folio_put(folio);
	wait_for_completion(&lw->done);

	KUNIT_ASSERT_TRUE_MSG(test, waited,
			      "%s: the read returned %zd without waiting for the locked folio",
			      c->name, lw->ret);
	KUNIT_ASSERT_EQ_MSG(test, cut_ret, 0, "%s: cutting the tail", c->name);
	/* It had copied nothing past the locked page when the cut began */
	cut_judge(test, ca, SHMEM_CUT_DURING_READ, CUT_AT, lw->buf, lw->ret,
		  "the read waiting for the lock");
	cut_read_after(test, ca, lw->buf);
}

/* ---- later folios while the read is stalled ---------------------------- */

enum later_op {
	LATER_SPLIT,		/* split_folio() of a later PMD folio */
	LATER_PUNCH,		/* punch a hole inside a later PMD folio */
	LATER_MIGRATE,		/* migrate a later small folio */
};

struct later_case {
	const char *name;	/* one word, as KTAP names a parameter */
	bool pmd;		/* PMD folios (huge=always), else small ones */
	bool falloc;		/* the folio read at the stall is fallocated */
	enum later_op op;
};

static const struct later_case later_cases[] = {
	{ "pmd-written-split", true, false, LATER_SPLIT },
	{ "pmd-written-punch", true, false, LATER_PUNCH },
	{ "pmd-fallocated-split", true, true, LATER_SPLIT },
	{ "small-written-migrate", false, false, LATER_MIGRATE },
	{ "small-fallocated-migrate", false, true, LATER_MIGRATE },
};

KUNIT_ARRAY_PARAM_DESC(later, later_cases, name);

/*
 * The files: three PMD folios, stalled in the first (buffer page 10), the
 * second split or punched from half way to three quarters; or 32 small
 * folios, stalled at buffer page 2 (the first four fallocated), folio 8
 * migrated.  The later folio is one a batch filled at the read's start
 * holds.
 */
#define PMD_FILE	(3 * PMD_BYTES)
#define PMD_STALL	10
#define PMD_LATER	PMD_PAGES
#define PUNCH_OFF	(PMD_BYTES + PMD_BYTES / 2)
#define PUNCH_LEN	(PMD_BYTES / 4)
#define SMALL_PAGES	32
#define SMALL_FALLOC	4
#define SMALL_STALL	2
#define SMALL_LATER	8

struct later_arg {
	const struct later_case *c;
	struct mm_kunit_file *sf;
	pgoff_t index;		/* of the later folio */
	int order;		/* of the folio the punch left at PUNCH_OFF; -1: none */
};

static int later_act(void *arg)
{
	struct later_arg *la = arg;
	struct folio *folio;
	int ret;

	switch (la->c->op) {
	case LATER_SPLIT:
		return mm_kunit_split_folio(la->sf, la->index, NULL);
	case LATER_PUNCH:
		ret = vfs_fallocate(la->sf->file, FALLOC_FL_PUNCH_HOLE |
				    FALLOC_FL_KEEP_SIZE, PUNCH_OFF, PUNCH_LEN);
		if (ret)
			return ret;
		folio = mm_kunit_file_folio(la->sf, PUNCH_OFF >> PAGE_SHIFT);
		la->order = folio ? folio_order(folio) : -1;
		if (folio)
			folio_put(folio);
		return 0;
	case LATER_MIGRATE:
		lru_add_drain_all();
		folio = mm_kunit_isolate_folio(la->sf, la->index);
		if (!folio)
			return -EBUSY;
		return mm_kunit_migrate_folio(folio) ? 0 : -EAGAIN;
	}
	return -EINVAL;
}

/*
 * While a read of a whole file is stalled in a fault of its user buffer,
 * inside the copy (or zero fill, for a fallocated folio) of an early
 * folio, a later folio of the file can be split (split_folio() returns
 * 0), have a hole punched in it that leaves the page cache (the split
 * that the punch tries succeeds), or be migrated, as on 7.3, whose read
 * held only the folio being copied from; then the read returns the file's
 * bytes, zeroes where the hole was punched.  A read that holds its folio
 * batch across the fault makes each of them fail.
 */
static void shmem_read_pins_later_folio_free_in_fault(struct kunit *test)
{
	const struct later_case *c = test->param_value;
	struct later_arg *la;
	pgoff_t stall;
	int act_ret;
	ssize_t n;
	u8 *kbuf;

	la = kunit_kzalloc(test, sizeof(*la), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, la);
	la->c = c;
	if (c->pmd) {
		la->sf = mm_kunit_file_create(test, "always", PMD_FILE);
		if (c->falloc)
			mm_kunit_file_falloc(test, la->sf, 0, PMD_BYTES);
		else
			mm_kunit_file_write(test, la->sf, 0, PMD_BYTES, 3);
		mm_kunit_file_write(test, la->sf, PMD_BYTES,
				    PMD_FILE - PMD_BYTES, 4);
		mm_kunit_need_pmd_folio(test, la->sf, 0);
		mm_kunit_need_pmd_folio(test, la->sf, PMD_LATER);
		mm_kunit_need_pmd_folio(test, la->sf, 2 * PMD_PAGES);
		la->index = PMD_LATER;
		stall = PMD_STALL;
		if (c->op == LATER_PUNCH)
			memset(la->sf->want + PUNCH_OFF, 0, PUNCH_LEN);
	} else {
		la->sf = mm_kunit_file_create(test, "never",
					      SMALL_PAGES * SZ_PAGE);
		if (c->falloc)
			mm_kunit_file_falloc(test, la->sf, 0,
					     SMALL_FALLOC * SZ_PAGE);
		mm_kunit_file_write(test, la->sf,
				    c->falloc ? SMALL_FALLOC * SZ_PAGE : 0,
				    (SMALL_PAGES - (c->falloc ? SMALL_FALLOC : 0)) *
				    SZ_PAGE, 5);
		la->index = SMALL_LATER;
		stall = SMALL_STALL;
	}
	kbuf = file_sized_buf(test, la->sf);

	n = stalled_read(test, la->sf, stall, later_act, la, &act_ret, kbuf);
	KUNIT_ASSERT_NE_MSG(test, act_ret, -ETIMEDOUT,
			    "%s: the read never faulted on buffer page %lu",
			    c->name, stall);
	switch (c->op) {
	case LATER_SPLIT:
		KUNIT_EXPECT_EQ_MSG(test, act_ret, 0,
				    "%s: split of the folio at index %lu while the read was stalled in a fault",
				    c->name, la->index);
		break;
	case LATER_PUNCH:
		KUNIT_EXPECT_EQ_MSG(test, act_ret, 0, "%s: the punch", c->name);
		KUNIT_EXPECT_EQ_MSG(test, la->order, -1,
				    "%s: the punch while the read was stalled in a fault left a folio of order %d at index %lu (its split failed)",
				    c->name, la->order,
				    (unsigned long)(PUNCH_OFF >> PAGE_SHIFT));
		break;
	case LATER_MIGRATE:
		KUNIT_EXPECT_EQ_MSG(test, act_ret, 0,
				    "%s: migration of the folio at index %lu while the read was stalled in a fault (-EBUSY: not on the LRU, -EAGAIN: not moved)",
				    c->name, la->index);
		break;
	}
	KUNIT_ASSERT_EQ_MSG(test, n, (ssize_t)la->sf->size, "%s: the read",
			    c->name);
	mm_kunit_check_bytes(test, kbuf, la->sf->want, 0, n, c->name);
}

static struct kunit_case shmem_read_pins_cases[] = {
	KUNIT_CASE_PARAM(shmem_read_pins_cut_during_copy_no_stale_bytes,
			 cut_gen_params),
	KUNIT_CASE_PARAM(shmem_read_pins_cut_during_lock_wait_no_stale_bytes,
			 cut_gen_params),
	KUNIT_CASE_PARAM(shmem_read_pins_later_folio_free_in_fault,
			 later_gen_params),
	{}
};

static struct kunit_suite shmem_read_pins_suite = {
	.name = "shmem_read_pins",
	.test_cases = shmem_read_pins_cases,
};

kunit_test_suite(shmem_read_pins_suite);

MODULE_DESCRIPTION("KUnit tests for what a stalled tmpfs read holds (shmem-batch)");
MODULE_LICENSE("GPL");
