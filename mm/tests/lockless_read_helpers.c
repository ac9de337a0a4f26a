// SPDX-License-Identifier: GPL-2.0
/*
 * What only reads without folio references need (lockless_read.h says what
 * each does): built once when a lockless suite or the pread16 or shmem_read
 * benchmark is.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/swap.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>

#include "lockless_read.h"

/* ---------------------------------------------------------- the feature */

void lr_require_rcu_free(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_PAGE_RCU_FREE))
		kunit_skip(test,
			   "not applied: rcu-free (no CONFIG_PAGE_RCU_FREE: no PG_rcu_free)");
}

/* ------------------------------------------- lockless_page_cache_read */

#define LR_SWITCH	"lockless_page_cache_read"

/* debugfs, mounted for this; NULL when debugfs is not built in */
static struct vfsmount *lr_debugfs(struct kunit *test)
{
	struct file_system_type *type = get_fs_type("debugfs");
	struct vfsmount *mnt;

	if (!type)
		return NULL;
	put_filesystem(type);
	mnt = mm_test_mount(test, "debugfs", NULL);
	return mnt;
}

static struct file *lr_switch_open(struct kunit *test)
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

bool lr_switch_exists(struct kunit *test)
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
 * memory (the restore below runs in KUnit's cleanup thread, after the
 * case's mm is gone).  Returns what vfs_read() or vfs_write() returned.
 */
static ssize_t lr_switch_rw(struct file *f, bool write, char *buf,
			    size_t len)
{
	unsigned long ubuf;
	char __user *u;
	loff_t pos = 0;
	ssize_t n;

	ubuf = mm_kunit_user_page();
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

static ssize_t lr_switch_io(struct kunit *test, bool write, char *buf,
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

static void lr_switch_restore(struct kunit_resource *res)
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
static void lr_switch_save(struct kunit *test)
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

void lr_switch(struct kunit *test, bool on)
{
	char buf[2] = { on ? '1' : '0', '\n' };

	lr_switch_save(test);
	KUNIT_ASSERT_EQ_MSG(test, lr_switch_io(test, true, buf, 2), 2,
			    "write %d to " LR_SWITCH, on);
}

int lr_switch_get(struct kunit *test)
{
	char buf[8] = {};

	KUNIT_ASSERT_GT(test, lr_switch_io(test, false, buf, sizeof(buf) - 1),
			0);
	return buf[0] - '0';
}

/* ------------------------------------------------- mm_filemap_read_rcu */

static void lr_count_probe(void *data, struct address_space *mapping,
			   pgoff_t index, size_t bytes)
{
	struct lr_count *c = data;

	atomic_long_inc(&c->sections);
	atomic_long_add(bytes, &c->bytes);
}

struct lr_count *lr_count_start(struct kunit *test)
{
	struct lr_count *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	if (!mm_test_probe(test, LR_TRACEPOINT, lr_count_probe, c))
		KUNIT_FAIL_AND_ABORT(test, "no tracepoint " LR_TRACEPOINT
				     ": rcu-free patch 13 is not applied");
	return c;
}

void lr_count_now(struct lr_count *c, struct lr_stat *s)
{
	s->sections = atomic_long_read(&c->sections);
	s->bytes = atomic_long_read(&c->bytes);
}

/*
 * The suites' probe: one at a time (KUnit runs one suite at a time), see
 * lr_suite_init().
 */
#define LR_WATCH_MAX	2

struct lr_trace {
	struct tracepoint *tp;		/* NULL: no mm_filemap_read_rcu */
	struct address_space *watch[LR_WATCH_MAX];
	struct lr_count count;
	/* Per watched file: the window [start, end) in pages, and its hits */
	pgoff_t win_start[LR_WATCH_MAX], win_end[LR_WATCH_MAX];
	atomic_long_t win_hits[LR_WATCH_MAX];
};

static struct lr_trace lr_trace;

static void lr_trace_probe(void *data, struct address_space *mapping,
			   pgoff_t index, size_t bytes)
{
	struct lr_trace *t = data;
	unsigned int i;

	pgoff_t start, end;

	for (i = 0; i < LR_WATCH_MAX; i++) {
		if (READ_ONCE(t->watch[i]) != mapping)
			continue;
		lr_count_probe(&t->count, mapping, index, bytes);
		end = READ_ONCE(t->win_end[i]);
		/* end before start: pairs with lr_window()'s smp_wmb() */
		smp_rmb();
		start = READ_ONCE(t->win_start[i]);
		/* Surely copied: pages index to index + (bytes - 1) / PAGE_SIZE */
		if (bytes && index < end &&
		    index + ((bytes - 1) >> PAGE_SHIFT) >= start)
			atomic_long_inc(&t->win_hits[i]);
	}
}

int lr_suite_init(struct kunit_suite *suite)
{
	struct mm_test_probe p = { .name = LR_TRACEPOINT };
	struct lr_trace *t = &lr_trace;

	for_each_kernel_tracepoint(mm_test_probe_find, &p);
	t->tp = p.tp;
	return t->tp ? tracepoint_probe_register(t->tp, lr_trace_probe, t) : 0;
}

void lr_suite_exit(struct kunit_suite *suite)
{
	struct lr_trace *t = &lr_trace;

	if (!t->tp)
		return;
	tracepoint_probe_unregister(t->tp, lr_trace_probe, t);
	tracepoint_synchronize_unregister();
	t->tp = NULL;
}

void lr_trace_case_init(struct kunit *test)
{
	struct lr_trace *t = &lr_trace;
	unsigned int i;

	for (i = 0; i < LR_WATCH_MAX; i++) {
		WRITE_ONCE(t->watch[i], NULL);
		WRITE_ONCE(t->win_end[i], 0);
		WRITE_ONCE(t->win_start[i], 0);
		atomic_long_set(&t->win_hits[i], 0);
	}
	atomic_long_set(&t->count.sections, 0);
	atomic_long_set(&t->count.bytes, 0);
	test->priv = t;
}

bool lr_watch(struct kunit *test, struct mm_kunit_file *lf, const char *part)
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

void lr_now(struct kunit *test, struct lr_stat *s)
{
	struct lr_trace *t = test->priv;

	lr_count_now(&t->count, s);
}

/* The slot lr_watch() gave @lf */
static unsigned int lr_watch_slot(struct kunit *test, struct lr_trace *t,
				  struct mm_kunit_file *lf)
{
	unsigned int i;

	for (i = 0; i < LR_WATCH_MAX; i++)
		if (t->watch[i] == lf->file->f_mapping)
			break;
	KUNIT_ASSERT_LT_MSG(test, i, LR_WATCH_MAX,
			    "a window of a file lr_watch() does not watch");
	return i;
}

void lr_window(struct kunit *test, struct mm_kunit_file *lf, loff_t start,
	       loff_t end)
{
	struct lr_trace *t = test->priv;
	unsigned int i = lr_watch_slot(test, t, lf);

	if (end <= start) {
		WRITE_ONCE(t->win_end[i], 0);
		return;
	}
	/*
	 * start before end, so that the probe, which loads end first, never
	 * sees a new end with an old start: the window only ever changes from
	 * empty or widens while it is set.
	 */
	WRITE_ONCE(t->win_start[i], start >> PAGE_SHIFT);
	/* start before end: pairs with lr_trace_probe()'s smp_rmb() */
	smp_wmb();
	WRITE_ONCE(t->win_end[i], DIV_ROUND_UP(end, PAGE_SIZE));
}

unsigned long lr_window_hits(struct kunit *test, struct mm_kunit_file *lf)
{
	struct lr_trace *t = test->priv;

	return atomic_long_read(&t->win_hits[lr_watch_slot(test, t, lf)]);
}

void lr_wait_deferred(void)
{
	if (MM_HOOK(RCU_FREE_HOLD))
		rcu_free_wait_grace();
	else
		synchronize_rcu();
}

/* ------------------------------------------------------- hot folios */

bool lr_index_flagged(struct mm_kunit_file *kf, pgoff_t index)
{
	struct folio *folio = mm_kunit_file_folio(kf, index);
	bool ret;

	if (!folio)
		return false;
	ret = folio_test_rcu_free(folio);
	folio_put(folio);
	return ret;
}

bool lr_page_rcu_free(struct page *page)
{
#ifdef CONFIG_PAGE_RCU_FREE
	return test_bit(PG_rcu_free, &page->flags.f);
#else
	return false;
#endif
}

unsigned long lr_pages_flagged(struct mm_kunit_file *kf, pgoff_t nr_pages)
{
	unsigned long nr = 0;
	pgoff_t index = 0;

	while (index < nr_pages) {
		struct folio *folio = mm_kunit_file_folio(kf, index);

		if (!folio) {
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

ssize_t lr_read_at(struct kunit *test, struct mm_kunit_file *kf, loff_t off,
		   size_t len)
{
	return mm_kunit_read(test, NULL, kf, MM_KUNIT_KVEC, off, len);
}

void lr_alternate_reads(struct kunit *test, struct mm_kunit_file *kf,
			loff_t a, loff_t b, unsigned int rounds, size_t len)
{
	unsigned int i;

	for (i = 0; i < rounds; i++) {
		KUNIT_ASSERT_GT(test, lr_read_at(test, kf, a, len), 0);
		KUNIT_ASSERT_GT(test, lr_read_at(test, kf, b, len), 0);
		lru_add_drain_all();
	}
}

void lr_make_hot(struct kunit *test, struct mm_kunit_file *lf)
{
	pgoff_t nr_pages = DIV_ROUND_UP(lf->size, PAGE_SIZE);
	unsigned int pass;
	loff_t off;

	for (pass = 0; pass < 16; pass++) {
		/* >=: a large folio may reach past EOF */
		if (lr_pages_flagged(lf, nr_pages) >= nr_pages)
			return;
		for (off = 0; off < lf->size; off += PAGE_SIZE)
			KUNIT_ASSERT_GT(test, lr_read_at(test, lf, off, 16), 0);
		/* See lr_alternate_reads() */
		lru_add_drain_all();
	}
	KUNIT_FAIL_AND_ABORT(test, "%lu of %lu pages flagged after 16 passes",
			     lr_pages_flagged(lf, nr_pages), nr_pages);
}

struct mm_kunit_file *lr_hot_file(struct kunit *test, enum mm_kunit_fs fs,
				  loff_t size, u8 seed)
{
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, fs, size);

	mm_kunit_file_write(test, lf, 0, lf->size, seed);
	lr_make_hot(test, lf);
	return lf;
}
