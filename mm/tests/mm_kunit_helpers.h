/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the mm suites, compiled once (mm_kunit_helpers.c; the model
 * is drivers/gpu/drm/tests/drm_kunit_helpers.c): a file on a private tmpfs
 * or ramfs with the bytes it must read as, readers through a kvec, a bvec
 * and a user-backed buffer, a byte checker that names the first wrong
 * offset, PMD-size folio checks, the ways a test cuts a file's tail, what
 * reclaim and migration do to one folio of a file, and how a user address
 * is mapped (huge PMD, PTE table or nothing).
 *
 *	struct mm_kunit_file *kf = mm_kunit_file_create(test, "always", size);
 *	struct mm_kunit_reader *r = mm_kunit_reader_create(test);
 *
 *	mm_kunit_file_write(test, kf, 0, size, seed);
 *	mm_kunit_read_and_check(test, r, kf, MM_KUNIT_UBUF, off, len);
 *
 * Everything a helper allocates or holds is released by a KUnit action
 * when the case ends, also when an assertion ends it early.
 */
#ifndef MM_TESTS_MM_KUNIT_HELPERS_H
#define MM_TESTS_MM_KUNIT_HELPERS_H

#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/pgtable.h>
#include <linux/sizes.h>
#include <linux/types.h>

struct folio;
struct mm_struct;

/* The size of a PMD-mapped THP on the architectures the suites run on */
#define MM_KUNIT_PMD_BYTES	(SZ_1M * 2)

/* Run @action(@arg) when the case ends; abort the case if that fails */
void mm_kunit_defer(struct kunit *test, kunit_action_t *action, void *arg);

/* vfree() as a KUnit action */
void mm_kunit_vfree(void *addr);

/* Whether the built-in tracepoint @name exists (found by name) */
bool mm_kunit_tracepoint_exists(const char *name);

/* ---- a file and the bytes it must read as ---------------------------- */

struct mm_kunit_file {
	struct file *file;
	loff_t size;
	u8 *want;		/* @size bytes: what every read must return */
};

/* A file of @size bytes (all hole) on a private tmpfs mounted huge=@huge */
struct mm_kunit_file *mm_kunit_file_create(struct kunit *test,
					   const char *huge, loff_t size);

/* The file systems of mm_kunit_fs_file_create() */
enum mm_kunit_fs {
	MM_KUNIT_TMPFS,		/* tmpfs, huge=never */
	MM_KUNIT_TMPFS_HUGE,	/* tmpfs, huge=always */
	MM_KUNIT_RAMFS,		/* ramfs: filemap_read(), unevictable folios */
	MM_KUNIT_NR_FS
};

extern const char *const mm_kunit_fs_name[MM_KUNIT_NR_FS];

/* A file of @size bytes (all hole) on a private mount of @fs */
struct mm_kunit_file *mm_kunit_fs_file_create(struct kunit *test,
					      enum mm_kunit_fs fs, loff_t size);
/*
 * Let go of the file now, before the case ends: its inode is evicted
 * before this returns; ->file is NULL afterwards.
 */
void mm_kunit_file_drop(struct kunit *test, struct mm_kunit_file *kf);
/* Write mm_test_pattern(@seed) over [@off, @off + @len), and to ->want */
void mm_kunit_file_write(struct kunit *test, struct mm_kunit_file *kf,
			 loff_t off, size_t len, u8 seed);
/* Allocate [@off, @off + @len) without writing it: it reads as zeroes */
void mm_kunit_file_falloc(struct kunit *test, struct mm_kunit_file *kf,
			  loff_t off, loff_t len);
/* Punch a hole over [@off, @off + @len), size kept; ->want is not changed */
void mm_kunit_file_punch(struct kunit *test, struct mm_kunit_file *kf,
			 loff_t off, loff_t len);
/* The page cache folio at @index with a reference, or NULL */
struct folio *mm_kunit_file_folio(struct mm_kunit_file *kf, pgoff_t index);
/*
 * Fail the case unless a PMD-size folio holds @index: a huge= tmpfs in a
 * freshly booted guest gets one, and a change that stops it from doing so
 * must show, not be skipped.
 */
void mm_kunit_need_pmd_folio(struct kunit *test, struct mm_kunit_file *kf,
			     pgoff_t index);
/*
 * Split the large folio at @index (which must be @expect, unless that is
 * NULL): 0, or -ENOENT (no folio there), -EINVAL (not large or not
 * @expect) or what split_folio() returned (-EAGAIN while someone else
 * holds a reference).
 */
int mm_kunit_split_folio(struct mm_kunit_file *kf, pgoff_t index,
			 struct folio *expect);
/*
 * Take the folio at @index off the LRU, for mm_kunit_migrate_folio() or
 * mm_kunit_reclaim_folio(); the isolation holds the only reference of
 * ours.  NULL if there is none or it is not on the LRU (a batch has it).
 */
struct folio *mm_kunit_isolate_folio(struct mm_kunit_file *kf, pgoff_t index);
/* Migrate an isolated folio anywhere (put back if it fails): moved or not */
bool mm_kunit_migrate_folio(struct folio *folio);
/* reclaim_pages() of an isolated folio: whether it was reclaimed */
bool mm_kunit_reclaim_folio(struct folio *folio);
/*
 * A page of user memory for a call that takes a __user pointer, in the
 * current mm, attached first if the thread has none (KUnit's cleanup
 * thread has none): its address, or a negative errno (IS_ERR_VALUE()).
 * vm_munmap() it after the call.
 */
unsigned long mm_kunit_user_page(void);

/*
 * Give the guest a swap device for the rest of the case, if it has none:
 * the first RAM disk (CONFIG_BLK_DEV_RAM) gets a swap header and is
 * switched on with the swapon() system call, as a user would, and off
 * again when the case ends.  Skips the case, with the reason, where that
 * cannot be done (no RAM disk, an architecture without the call here).
 */
void mm_kunit_need_swap(struct kunit *test);
/*
 * Swap out pages [@first, @first + @nr) of a tmpfs file (swap must be on):
 * reclaim each folio there until every slot of the range holds a swap
 * entry, or fail the case.
 */
void mm_kunit_swap_out(struct kunit *test, struct mm_kunit_file *kf,
		       pgoff_t first, pgoff_t nr);
/* How many slots of [@first, @first + @nr) hold a swap entry */
pgoff_t mm_kunit_nr_swapped(struct mm_kunit_file *kf, pgoff_t first,
			    pgoff_t nr);

/* How a test cuts off a file's tail from an offset on */
enum mm_kunit_cut {
	MM_KUNIT_CUT_SHRINK,	/* truncate down, then up to the old size */
	MM_KUNIT_CUT_PUNCH,	/* punch a hole up to the end, size kept */
};

struct mm_kunit_cut_mode {
	const char *name;
	enum mm_kunit_cut cut;
};

/* Both ways, for KUNIT_ARRAY_PARAM_DESC(..., mm_kunit_cut_modes, name) */
extern const struct mm_kunit_cut_mode mm_kunit_cut_modes[2];

/* Cut @kf from @from to its end; ->want is not changed. 0 or -errno */
int mm_kunit_file_cut(struct mm_kunit_file *kf, loff_t from,
		      enum mm_kunit_cut cut);

/* ---- readers --------------------------------------------------------- */

enum mm_kunit_iter {
	MM_KUNIT_KVEC,		/* kernel_read(): iov_iter_zero() for holes */
	MM_KUNIT_BVEC,		/* vfs_iter_read() into the pages of a bvec */
	MM_KUNIT_UBUF,		/* vfs_read() into a kunit_vm_mmap() buffer */
	MM_KUNIT_NR_ITERS
};

extern const char *const mm_kunit_iter_name[MM_KUNIT_NR_ITERS];

#define MM_KUNIT_READER_LEN	(SZ_1M * 4)
/* The last 64 KiB of the user buffer are unmapped: a copy there faults */
#define MM_KUNIT_READER_USABLE	(MM_KUNIT_READER_LEN - SZ_64K)

struct mm_kunit_reader {
	u8 *kbuf;		/* where every read's bytes end up */
	unsigned long ubuf;	/* user-backed, MM_KUNIT_READER_USABLE mapped */
};

struct mm_kunit_reader *mm_kunit_reader_create(struct kunit *test);

/*
 * Read @len bytes of @kf at @off through @iter; the bytes land in r->kbuf
 * (filled with 0xa5 first).  The user buffer is faulted in before a
 * MM_KUNIT_UBUF read (a fault under rcu_read_lock() would end a copy
 * without folio references early).  With @r NULL the read is for what it
 * does to the page cache (an access), not for the bytes: at most 64 of
 * them through a kvec, into a scratch buffer.  Returns what the read
 * returned.
 */
ssize_t mm_kunit_read(struct kunit *test, struct mm_kunit_reader *r,
		      struct mm_kunit_file *kf, enum mm_kunit_iter iter,
		      loff_t off, size_t len);

/*
 * Compare @n bytes @got with @want, which are the file's bytes from offset
 * @off on; on a difference fail with the file offset of the first wrong
 * byte, prefixed by @what.  0 when equal, -EINVAL otherwise.
 */
int mm_kunit_check_bytes(struct kunit *test, const u8 *got, const u8 *want,
			 loff_t off, size_t n, const char *what);

/*
 * Read @len at @off through @iter and check that it returned every byte
 * up to EOF and that they are the file's.  0 when it did.
 */
int mm_kunit_read_and_check(struct kunit *test, struct mm_kunit_reader *r,
			    struct mm_kunit_file *kf, enum mm_kunit_iter iter,
			    loff_t off, size_t len);

/* ---- user mappings: THPs and their PMDs ------------------------------ */

enum mm_kunit_pmd {
	MM_KUNIT_PMD_NONE,	/* nothing mapped at the address */
	MM_KUNIT_PMD_HUGE,	/* a huge PMD: a PMD-mapped THP */
	MM_KUNIT_PMD_TABLE,	/* a PTE table */
};

/* The PMD entry of @addr in @mm, or NULL; the caller holds mmap_lock */
pmd_t *mm_kunit_user_pmd(struct mm_struct *mm, unsigned long addr);
/* How @addr is mapped right now (takes mmap_lock for read) */
enum mm_kunit_pmd mm_kunit_pmd_state(struct mm_struct *mm, unsigned long addr);
/* The PMD-mapped folio at @addr with a reference held, or NULL */
struct folio *mm_kunit_pmd_folio(struct mm_struct *mm, unsigned long addr);

#endif /* MM_TESTS_MM_KUNIT_HELPERS_H */
