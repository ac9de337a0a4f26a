/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A private kernel mount for the mm-kunit suites and benchmarks that need
 * a file system of their own (tmpfs with a chosen huge= policy, ramfs).
 */
#ifndef MM_TESTS_KUNIT_MOUNT_H
#define MM_TESTS_KUNIT_MOUNT_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/mount.h>

KUNIT_DEFINE_ACTION_WRAPPER(kunit_mount_put, kern_unmount, struct vfsmount *);

/*
 * Mount @fstype for the current case, with "huge=@huge" when @huge is not
 * NULL; the mount goes away when the case ends.  Aborts the case on error.
 */
static inline struct vfsmount *kunit_kern_mount(struct kunit *test,
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
	ret = kunit_add_action_or_reset(test, kunit_mount_put, mnt);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return mnt;
}

#endif /* MM_TESTS_KUNIT_MOUNT_H */
