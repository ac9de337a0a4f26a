// SPDX-License-Identifier: GPL-2.0
/*
 * Sequential tmpfs read throughput, the fio job of the shmem-batch series
 * (fio --rw=read --ioengine=sync) done in the kernel: a file on a private
 * tmpfs mount is read start to end with read(2)-sized requests into a
 * user buffer (vfs_read() on a kunit_vm_mmap() area, as fio's sync engine
 * does), for 4 KiB, 64 KiB and 1 MiB blocks, huge=never and huge=always,
 * and written, fallocated and hole files.
 *
 * The comparison is between kernels (with and without shmem-batch), so
 * every line has variant=-; run it with make bench-compare.  Rounds are
 * interleaved over the configurations so drift spreads evenly.
 */

#include <kunit/test.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

#include "../../mm/tests/kunit_mount.h"
#include "../../mm/tests/mm_bench.h"

#define FILE_SIZE	(SZ_1M * 64)
/* passes over the file per sample: 256 MiB, long enough to ride out noise */
#define PASSES		4
#define SAMPLE_BYTES	((u64)FILE_SIZE * PASSES)

KUNIT_DEFINE_ACTION_WRAPPER(fput_wrapper, fput, struct file *);

enum layout { WRITTEN, FALLOCATED, HOLE, NR_LAYOUTS };

static const char * const layout_name[] = { "written", "fallocated", "hole" };
static const char * const huge_opt[] = { "never", "always" };
static const size_t block_sizes[] = { SZ_4K, SZ_64K, SZ_1M };

static struct file *make_file(struct kunit *test, struct vfsmount *mnt,
			      enum layout layout, u8 *chunk)
{
	struct file *file;
	loff_t pos = 0;

	file = shmem_file_setup_with_mnt(mnt, "seqread", FILE_SIZE,
					 mk_vma_flags(VMA_NORESERVE_BIT));
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fput_wrapper, file),
			0);
	if (layout == FALLOCATED)
		KUNIT_ASSERT_EQ(test, vfs_fallocate(file, FALLOC_FL_KEEP_SIZE,
						    0, FILE_SIZE), 0);
	while (layout == WRITTEN && pos < FILE_SIZE)
		KUNIT_ASSERT_EQ(test, kernel_write(file, chunk, SZ_1M, &pos),
				SZ_1M);
	return file;
}

/* Read the whole file PASSES times in @bs requests; nanoseconds taken. */
static u64 read_file(struct kunit *test, struct file *file,
		     unsigned long ubuf, size_t bs)
{
	u64 t0 = ktime_get_ns();
	unsigned int pass;
	ssize_t ret;
	loff_t pos;

	for (pass = 0; pass < PASSES; pass++) {
		for (pos = 0; pos < FILE_SIZE;) {
			ret = vfs_read(file, (char __user *)ubuf, bs, &pos);
			if (ret != bs) {
				KUNIT_FAIL(test, "read %zu at %lld returned %zd",
					   bs, pos, ret);
				return 0;
			}
		}
	}
	return ktime_get_ns() - t0;
}

/*
 * MiB/s of sequential reads for every block size, huge= mode and layout;
 * BENCH_ROUNDS rounds each.
 */
static void shmem_seq_read_throughput(struct kunit *test)
{
	struct file *files[ARRAY_SIZE(huge_opt)][NR_LAYOUTS];
	unsigned int h, l, b, round;
	unsigned long ubuf;
	char config[96];
	u8 *chunk;
	u64 ns;

	bench_env(test);
	chunk = kunit_kmalloc(test, SZ_1M, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, chunk);
	memset(chunk, 0x5a, SZ_1M);
	ubuf = kunit_vm_mmap(test, NULL, 0, SZ_1M, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, 0);
	KUNIT_ASSERT_NE(test, ubuf, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(ubuf));

	for (h = 0; h < ARRAY_SIZE(huge_opt); h++) {
		struct vfsmount *mnt = kunit_kern_mount(test, "tmpfs", huge_opt[h]);

		for (l = 0; l < NR_LAYOUTS; l++)
			files[h][l] = make_file(test, mnt, l, chunk);
	}

	for (round = 1; round <= BENCH_ROUNDS; round++) {
		for (h = 0; h < ARRAY_SIZE(huge_opt); h++) {
			for (l = 0; l < NR_LAYOUTS; l++) {
				for (b = 0; b < ARRAY_SIZE(block_sizes); b++) {
					ns = read_file(test, files[h][l], ubuf,
						       block_sizes[b]);
					if (!ns)
						return;
					snprintf(config, sizeof(config),
						 "bench=shmem_seq_read huge=%s layout=%s bs=%zu",
						 huge_opt[h], layout_name[l],
						 block_sizes[b]);
					bench_line(test, config, "-", round,
						   bench_rate_milli(SAMPLE_BYTES, ns, SZ_1M),
						   "MiB/s");
					cond_resched();
				}
			}
		}
	}
}

static struct kunit_case shmem_read_benchmark_cases[] = {
	KUNIT_CASE_SLOW(shmem_seq_read_throughput),
	{}
};

static struct kunit_suite shmem_read_benchmark_suite = {
	.name = "shmem_read_benchmark",
	.test_cases = shmem_read_benchmark_cases,
};

kunit_test_suite(shmem_read_benchmark_suite);

MODULE_DESCRIPTION("Sequential tmpfs read throughput (shmem-batch)");
MODULE_LICENSE("GPL");
