/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files with a known pattern, the debugfs lockless_page_cache_read switch
 * and the count of what reads copied without folio references (from the
 * mm_filemap_read_rcu tracepoint), shared by the lockless_read suites and
 * the pread16 and shmem_read benchmarks; for the suites also what a kernel
 * has of the rcu-free series (stand-ins where it has none), how reads make
 * folios hot, and the suite-wide probe each case filters by its files.
 */
#ifndef MM_TESTS_LOCKLESS_READ_H
#define MM_TESTS_LOCKLESS_READ_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/ramfs.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>
#include <linux/swap.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "../page_alloc.h"
#include "mm_hooks.h"
#include "mm_test_util.h"

/* ---------------------------------------------------------- the feature */

/*
 * PG_rcu_free is the series' (rcu-free patch 1, CONFIG_PAGE_RCU_FREE):
 * without it (7.3) these stand-ins let the suites build, and every case
 * skips before it gets to them (lr_require_rcu_free()).
 */
#ifndef CONFIG_PAGE_RCU_FREE
#define folio_test_rcu_free(folio)	((void)(folio), false)
#define folio_set_rcu_free(folio)	((void)(folio))
#define folio_clear_rcu_free(folio)	((void)(folio))
#endif

/* The top of every case: skip, saying so, on a kernel without rcu-free */
static inline void lr_require_rcu_free(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_PAGE_RCU_FREE))
		kunit_skip(test,
			   "not applied: rcu-free (no CONFIG_PAGE_RCU_FREE: no PG_rcu_free)");
}

enum lr_kind { LR_TMPFS, LR_TMPFS_HUGE, LR_RAMFS };

static const char * const lr_kind_name[] = {
	"tmpfs", "tmpfs huge=always", "ramfs",
};

struct lr_file {
	struct file *file;
	loff_t size;
	u8 *want;		/* what the file should hold */
};

static inline void lr_file_release(void *data)
{
	struct lr_file *lf = data;

	if (lf->file)
		fput(lf->file);
	vfree(lf->want);
}

/* An empty file of @size on a mount of its own; gone when the case ends */
static inline struct lr_file *lr_file_create(struct kunit *test,
					     enum lr_kind kind, loff_t size)
{
	struct vfsmount *mnt = mm_test_mount(test,
				kind == LR_RAMFS ? "ramfs" : "tmpfs",
				kind == LR_TMPFS_HUGE ? "always" :
				kind == LR_TMPFS ? "never" : NULL);
	struct lr_file *lf = kunit_kzalloc(test, sizeof(*lf), GFP_KERNEL);
	struct file *file;

	KUNIT_ASSERT_NOT_NULL(test, lf);
	if (kind == LR_RAMFS) {
		struct inode *inode = ramfs_get_inode(mnt->mnt_sb, NULL,
						      S_IFREG | 0600, 0);

		KUNIT_ASSERT_NOT_NULL(test, inode);
		file = alloc_file_pseudo(inode, mnt, "lockless_read", O_RDWR,
					 &ramfs_file_operations);
		if (IS_ERR(file))
			iput(inode);
	} else {
		file = shmem_file_setup_with_mnt(mnt, "lockless_read", size,
						 mk_vma_flags(VMA_NORESERVE_BIT));
	}
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "%s file: %ld",
			       lr_kind_name[kind], PTR_ERR(file));
	lf->file = file;
	lf->size = size;
	lf->want = vzalloc(size);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, lr_file_release,
							lf), 0);
	KUNIT_ASSERT_NOT_NULL(test, lf->want);
	return lf;
}

/* Write the pattern (with @seed) over [@off, @off + @len) */
static inline void lr_file_write(struct kunit *test, struct lr_file *lf,
				 loff_t off, size_t len, u8 seed)
{
	loff_t pos = off;
	size_t i;

	KUNIT_ASSERT_LE(test, off + (loff_t)len, lf->size);
	for (i = 0; i < len; i++)
		lf->want[off + i] = mm_test_pattern(off + i, seed);
	KUNIT_ASSERT_EQ_MSG(test, kernel_write(lf->file, lf->want + off, len,
					       &pos), (ssize_t)len,
			    "write %lld+%zu", off, len);
}

/* Drop the file now: its inode is evicted before this returns */
static inline void lr_file_drop(struct kunit *test, struct lr_file *lf)
{
	struct file *file = lf->file;

	lf->file = NULL;
	__fput_sync(file);
}

/* The case needs a PMD-size folio at @index: failing to get one is a failure */
static inline void lr_need_pmd_folio(struct kunit *test, struct lr_file *lf,
				     pgoff_t index)
{
	struct folio *folio = filemap_get_folio(lf->file->f_mapping, index);
	size_t size = 0;

	if (!IS_ERR(folio)) {
		size = folio_size(folio);
		folio_put(folio);
	}
	KUNIT_ASSERT_GE_MSG(test, size, (size_t)(PAGE_SIZE << HPAGE_PMD_ORDER),
			    "no PMD-size folio at index %lu", index);
}

/* ------------------------------------------- lockless_page_cache_read */

#define LR_SWITCH	"lockless_page_cache_read"

/* debugfs, mounted for this; NULL when debugfs is not built in */
static inline struct vfsmount *lr_debugfs(struct kunit *test)
{
	struct file_system_type *type = get_fs_type("debugfs");
	struct vfsmount *mnt;

	if (!type)
		return NULL;
	put_filesystem(type);
	mnt = mm_test_mount(test, "debugfs", NULL);
	return mnt;
}

static inline struct file *lr_switch_open(struct kunit *test)
{
	struct vfsmount *mnt = lr_debugfs(test);
	struct file *f;

	KUNIT_ASSERT_NOT_NULL_MSG(test, mnt, "no debugfs (CONFIG_DEBUG_FS)");
	f = file_open_root_mnt(mnt, LR_SWITCH, O_RDWR, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f),
			       "no debugfs " LR_SWITCH ": %ld (rcu-free patch 18 not applied?)",
			       PTR_ERR(f));
	return f;
}

/* Does this kernel have the switch?  For benchmarks that skip without it */
static inline bool lr_switch_exists(struct kunit *test)
{
	struct vfsmount *mnt = lr_debugfs(test);
	struct file *f;

	if (!mnt)
		return false;
	f = file_open_root_mnt(mnt, LR_SWITCH, O_RDONLY, 0);
	if (IS_ERR(f))
		return false;
	fput(f);
	return true;
}

/*
 * The switch is a debugfs attribute: it has ->read and ->write only, so
 * kernel_read() and kernel_write() refuse it.  Go through a page of user
 * memory in the current mm, attached first if the thread has none: the
 * restore below runs in KUnit's cleanup thread, after the case's mm is
 * gone.  Returns what vfs_read() or vfs_write() returned.
 */
static inline ssize_t lr_switch_rw(struct file *f, bool write, char *buf,
				   size_t len)
{
	unsigned long ubuf;
	char __user *u;
	loff_t pos = 0;
	ssize_t n;
	int ret;

	ret = kunit_attach_mm();
	if (ret)
		return ret;
	ubuf = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(ubuf))
		return ubuf;
	u = (char __user *)ubuf;
	if (write) {
		n = copy_to_user(u, buf, len) ? -EFAULT : vfs_write(f, u, len, &pos);
	} else {
		n = vfs_read(f, u, len, &pos);
		if (n > 0 && copy_from_user(buf, u, n))
			n = -EFAULT;
	}
	vm_munmap(ubuf, PAGE_SIZE);
	return n;
}

static inline ssize_t lr_switch_io(struct kunit *test, bool write, char *buf,
				   size_t len)
{
	struct file *f = lr_switch_open(test);
	ssize_t n = lr_switch_rw(f, write, buf, len);

	fput(f);
	return n;
}

#define LR_SWITCH_SAVED	"lr_switch_saved"

/* The switch as a case found it, written back when the case ends */
struct lr_switch_saved {
	struct kunit_resource res;
	struct file *file;
	char value;
};

static inline void lr_switch_restore(struct kunit_resource *res)
{
	struct lr_switch_saved *saved = res->data;
	char buf[2] = { saved->value, '\n' };

	if (lr_switch_rw(saved->file, true, buf, sizeof(buf)) != sizeof(buf))
		pr_err("mm-kunit: could not restore " LR_SWITCH " to %c\n",
		       saved->value);
	fput(saved->file);
}

/*
 * Before a case first changes the switch: read its value, and write it back
 * when the case ends, also when an assertion ends the case early.
 */
static inline void lr_switch_save(struct kunit *test)
{
	struct kunit_resource *found = kunit_find_named_resource(test,
								 LR_SWITCH_SAVED);
	struct lr_switch_saved *saved;
	char buf[8] = {};

	if (found) {
		kunit_put_resource(found);
		return;
	}
	saved = kunit_kzalloc(test, sizeof(*saved), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, saved);
	saved->file = lr_switch_open(test);
	if (lr_switch_rw(saved->file, false, buf, sizeof(buf) - 1) <= 0 ||
	    (buf[0] != '0' && buf[0] != '1')) {
		fput(saved->file);
		KUNIT_FAIL_AND_ABORT(test, "cannot read " LR_SWITCH);
	}
	saved->value = buf[0];
	KUNIT_ASSERT_EQ(test, kunit_add_named_resource(test, NULL,
						       lr_switch_restore,
						       &saved->res,
						       LR_SWITCH_SAVED, saved),
			0);
}

/*
 * Write @on to the switch through debugfs, for the rest of the case: the
 * value found before the case's first write is restored when it ends.
 */
static inline void lr_switch(struct kunit *test, bool on)
{
	char buf[2] = { on ? '1' : '0', '\n' };

	lr_switch_save(test);
	KUNIT_ASSERT_EQ_MSG(test, lr_switch_io(test, true, buf, 2), 2,
			    "write %d to " LR_SWITCH, on);
}

/* What the switch reads back as */
static inline int lr_switch_get(struct kunit *test)
{
	char buf[8] = {};

	KUNIT_ASSERT_GT(test, lr_switch_io(test, false, buf, sizeof(buf) - 1),
			0);
	return buf[0] - '0';
}

/* ------------------------------------------------- mm_filemap_read_rcu */

#define LR_TRACEPOINT	MM_HOOK_TRACE_FILEMAP_READ_RCU

/*
 * What reads copied without folio references while a case counts: the
 * mm_filemap_read_rcu tracepoint (rcu-free patch 13) fires once per RCU
 * read-side critical section that copied something, with the bytes it
 * copied.  Its probe runs inside rcu_read_lock(), on any CPU: atomics.
 */
struct lr_count {
	atomic_long_t sections;
	atomic_long_t bytes;
};

/* A snapshot of the counts, for the difference over a read */
struct lr_stat {
	unsigned long sections;
	unsigned long bytes;
};

static inline void lr_count_probe(void *data, struct address_space *mapping,
				  pgoff_t index, size_t bytes)
{
	struct lr_count *c = data;

	atomic_long_inc(&c->sections);
	atomic_long_add(bytes, &c->bytes);
}

/*
 * For the benchmarks: count from now until the case ends (a KUnit action
 * detaches the probe, also when an assertion ends the case early).  Fails
 * the case on a kernel without the tracepoint.
 */
static inline struct lr_count *lr_count_start(struct kunit *test)
{
	struct lr_count *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	if (!mm_test_probe(test, LR_TRACEPOINT, lr_count_probe, c))
		KUNIT_FAIL_AND_ABORT(test, "no tracepoint " LR_TRACEPOINT
				     ": rcu-free patch 13 is not applied");
	return c;
}

static inline void lr_count_now(struct lr_count *c, struct lr_stat *s)
{
	s->sections = atomic_long_read(&c->sections);
	s->bytes = atomic_long_read(&c->bytes);
}

/*
 * The suites' probe: one for the whole suite, attached in .suite_init (as
 * kfence_test attaches its console probe), counting only the reads of the
 * files the running case watches (lr_watch()); .init points test->priv at
 * it and clears it.  The tracepoint is a hook of ours: without it, what a
 * case would have read from it is skipped, named, and the rest decides.
 */
#define LR_WATCH_MAX	2

struct lr_trace {
	struct tracepoint *tp;		/* NULL: no mm_filemap_read_rcu */
	struct address_space *watch[LR_WATCH_MAX];
	struct lr_count count;
};

static inline void lr_trace_probe(void *data, struct address_space *mapping,
				  pgoff_t index, size_t bytes)
{
	struct lr_trace *t = data;
	unsigned int i;

	for (i = 0; i < LR_WATCH_MAX; i++)
		if (READ_ONCE(t->watch[i]) == mapping)
			lr_count_probe(&t->count, mapping, index, bytes);
}

/* .suite_init: attach the probe if the kernel has the tracepoint */
static inline int lr_trace_suite_init(struct lr_trace *t)
{
	struct mm_test_probe p = { .name = LR_TRACEPOINT };

	for_each_kernel_tracepoint(mm_test_probe_find, &p);
	t->tp = p.tp;
	return t->tp ? tracepoint_probe_register(t->tp, lr_trace_probe, t) : 0;
}

static inline void lr_trace_suite_exit(struct lr_trace *t)
{
	if (!t->tp)
		return;
	tracepoint_probe_unregister(t->tp, lr_trace_probe, t);
	tracepoint_synchronize_unregister();
	t->tp = NULL;
}

/* .init: nothing watched, nothing counted, test->priv the probe's data */
static inline void lr_trace_case_init(struct kunit *test, struct lr_trace *t)
{
	unsigned int i;

	for (i = 0; i < LR_WATCH_MAX; i++)
		WRITE_ONCE(t->watch[i], NULL);
	atomic_long_set(&t->count.sections, 0);
	atomic_long_set(&t->count.bytes, 0);
	test->priv = t;
}

/*
 * Count the copies without references from reads of @lf from now on, for
 * the part of the case @part says; false, logged as a skipped part that
 * names the tracepoint, on a kernel without it.
 */
static inline bool lr_watch(struct kunit *test, struct lr_file *lf,
			    const char *part)
{
	struct lr_trace *t = test->priv;
	unsigned int i;

	if (!mm_hook_trace(test, t->tp, LR_TRACEPOINT, part))
		return false;
	for (i = 0; i < LR_WATCH_MAX && t->watch[i]; i++)
		if (t->watch[i] == lf->file->f_mapping)
			return true;
	KUNIT_ASSERT_LT(test, i, LR_WATCH_MAX);
	WRITE_ONCE(t->watch[i], lf->file->f_mapping);
	return true;
}

/* What the watched reads copied without references so far */
static inline void lr_now(struct kunit *test, struct lr_stat *s)
{
	struct lr_trace *t = test->priv;

	lr_count_now(&t->count, s);
}

/*
 * Wait until what the case left waiting for a grace period is freed: with
 * our rcu_free_wait_grace() (a hook), else a grace period at least.
 */
static inline void lr_wait_deferred(void)
{
	if (MM_HOOK(RCU_FREE_HOLD))
		rcu_free_wait_grace();
	else
		synchronize_rcu();
}

/* ------------------------------------------------------- hot folios */

/* Is the folio at @index flagged?  false for a hole */
static inline bool lr_index_flagged(struct file *file, pgoff_t index)
{
	struct folio *folio = filemap_get_folio(file->f_mapping, index);
	bool ret;

	if (IS_ERR(folio))
		return false;
	ret = folio_test_rcu_free(folio);
	folio_put(folio);
	return ret;
}

/* Pages of flagged folios in [0, @nr_pages) */
static inline unsigned long lr_pages_flagged(struct file *file,
					     pgoff_t nr_pages)
{
	unsigned long nr = 0;
	pgoff_t index = 0;

	while (index < nr_pages) {
		struct folio *folio = filemap_get_folio(file->f_mapping, index);

		if (IS_ERR(folio)) {
			index++;
			continue;
		}
		if (folio_test_rcu_free(folio))
			nr += folio_nr_pages(folio);
		index = folio_next_index(folio);
		folio_put(folio);
	}
	return nr;
}

/* @len (at most 64) bytes read at @off through a kvec, to a scratch buffer */
static inline ssize_t lr_read_at(struct file *file, loff_t off, size_t len)
{
	u8 scratch[64];
	loff_t pos = off;

	return kernel_read(file, scratch, min(len, sizeof(scratch)), &pos);
}

/*
 * Read the start of folio @a and folio @b in turn, @rounds times: every read
 * enters a folio the last one did not end in, so each counts as an access.
 * The LRU batches are drained after each round: folio_activate() only
 * queues a folio, and until the batch is drained the folio is not active
 * (nor unevictable, on ramfs), so the next access would queue it again
 * instead of finding it hot.  How long a batch waits depends on what else
 * the CPU does; draining makes the count of accesses the same every run.
 */
static inline void lr_alternate_reads(struct kunit *test, struct file *file,
				      loff_t a, loff_t b, unsigned int rounds,
				      size_t len)
{
	unsigned int i;

	for (i = 0; i < rounds; i++) {
		KUNIT_ASSERT_GT(test, lr_read_at(file, a, len), 0);
		KUNIT_ASSERT_GT(test, lr_read_at(file, b, len), 0);
		lru_add_drain_all();
	}
}

/*
 * Read the whole file in 4 KiB pieces until every folio is flagged, at most
 * 16 passes; each pass enters each folio once.
 */
static inline void lr_make_hot(struct kunit *test, struct lr_file *lf)
{
	pgoff_t nr_pages = DIV_ROUND_UP(lf->size, PAGE_SIZE);
	unsigned int pass;
	loff_t off;

	for (pass = 0; pass < 16; pass++) {
		/* >=: a large folio may reach past EOF */
		if (lr_pages_flagged(lf->file, nr_pages) >= nr_pages)
			return;
		for (off = 0; off < lf->size; off += PAGE_SIZE)
			KUNIT_ASSERT_GT(test, lr_read_at(lf->file, off, 16), 0);
		/* See lr_alternate_reads() */
		lru_add_drain_all();
	}
	KUNIT_FAIL_AND_ABORT(test, "%lu of %lu pages flagged after 16 passes",
			     lr_pages_flagged(lf->file, nr_pages), nr_pages);
}

#endif /* MM_TESTS_LOCKLESS_READ_H */
