/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the mm suites and benchmarks share: a private kernel mount for
 * those that need a file system of their own (tmpfs with a chosen huge=
 * policy, ramfs), the byte pattern files and pages are filled with, and a
 * probe on a tracepoint for the rest of a case.
 */
#ifndef MM_TESTS_MM_TEST_UTIL_H
#define MM_TESTS_MM_TEST_UTIL_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/tracepoint.h>

KUNIT_DEFINE_ACTION_WRAPPER(mm_test_unmount, kern_unmount, struct vfsmount *);

/*
 * The final fput() of a file as a KUnit action:
 * kunit_add_action_or_reset(test, mm_test_fput, f).  Synchronous: a
 * kthread's fput() defers the release a jiffy, and with it the last
 * reference to the case's kernel mount, whose teardown frees the file's
 * page cache; that would land in a later case (rcu_free's counters of
 * waiting pages saw it).  No lock is held and nothing here unmounts.
 */
static inline void mm_test_fput(void *file)
{
	__fput_sync(file);
}

/* folio_put() as a KUnit action, for a reference a case holds */
static inline void mm_test_folio_put(void *folio)
{
	folio_put(folio);
}

/*
 * The byte at offset @off of data written with @seed.  Never 0, so that
 * zeroes (holes, fallocated or truncated ranges) stand out; differs
 * between neighbouring pages at every offset, and between two seeds at
 * every offset (the seed moves the high bits the byte is taken from), so
 * a byte of another page, another file or an older write shows (checked
 * for every offset below 64 MiB and the seeds 0 to 12).
 */
static inline u8 mm_test_pattern(u64 off, u8 seed)
{
	u32 x = (u32)(off >> PAGE_SHIFT) * 2654435761u + (u32)off * 40503u +
		seed * 2246822519u;

	return (x >> 16) | 1;
}

/*
 * Mount @fstype for the current case, with "huge=@huge" when @huge is not
 * NULL; the mount goes away when the case ends.  Aborts the case on error.
 */
static inline struct vfsmount *mm_test_mount(struct kunit *test,
					     const char *fstype,
					     const char *huge)
{
	struct file_system_type *type = get_fs_type(fstype);
	struct fs_context *fc;
	struct vfsmount *mnt;
	int ret;

	KUNIT_ASSERT_NOT_NULL_MSG(test, type, "no file system %s", fstype);
	fc = fs_context_for_mount(type, SB_KERNMOUNT);
	put_filesystem(type);
	KUNIT_ASSERT_FALSE(test, IS_ERR(fc));
	ret = vfs_parse_fs_string(fc, "source", fstype);
	if (!ret && huge)
		ret = vfs_parse_fs_string(fc, "huge", huge);
	if (ret) {
		put_fs_context(fc);
		KUNIT_FAIL_AND_ABORT(test, "%s huge=%s: %d", fstype, huge, ret);
	}
	mnt = fc_mount_longterm(fc);
	put_fs_context(fc);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mnt), "mount %s: %ld", fstype,
			       PTR_ERR(mnt));
	ret = kunit_add_action_or_reset(test, mm_test_unmount, mnt);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return mnt;
}

struct mm_test_probe {
	const char *name;
	struct tracepoint *tp;
	void *probe;
	void *data;
};

static inline void mm_test_probe_find(struct tracepoint *tp, void *priv)
{
	struct mm_test_probe *p = priv;

	if (!strcmp(tp->name, p->name))
		p->tp = tp;
}

static inline void mm_test_probe_stop(void *arg)
{
	struct mm_test_probe *p = arg;

	tracepoint_probe_unregister(p->tp, p->probe, p->data);
	/* No call of @probe may still be running when the case frees @data */
	tracepoint_synchronize_unregister();
}

/*
 * Attach @probe, with @data, to the built-in tracepoint @name until the
 * case ends, when a KUnit action detaches it (also when an assertion ends
 * the case early; @data must outlive it: allocate it before calling this).
 * The tracepoint is found by name, as kfence_test finds "console", so that
 * nothing has to export it for the tests.  Returns false on a kernel
 * without it.
 */
static inline bool mm_test_probe(struct kunit *test, const char *name,
				 void *probe, void *data)
{
	struct mm_test_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->name = name;
	for_each_kernel_tracepoint(mm_test_probe_find, p);
	if (!p->tp)
		return false;
	p->probe = probe;
	p->data = data;
	KUNIT_ASSERT_EQ(test, tracepoint_probe_register(p->tp, probe, data), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							mm_test_probe_stop, p),
			0);
	return true;
}

#endif /* MM_TESTS_MM_TEST_UTIL_H */
