/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the mm-kunit benchmark suites (*_benchmark.c).
 *
 * Each measurement is one KTAP diagnostic line in the case's output:
 *
 *     # BENCH bench=<name> <key>=<value>... variant=<side> round=<n> value=<x> unit=<u>
 *
 * The keys other than bench, variant, round, value and unit name the
 * configuration; variant is the side of an in-boot comparison (off/on),
 * or "-" when the comparison is between kernels (make bench-compare).
 * scripts/benchreport.py reads these lines through kunit_tool's parser.
 *
 * Each case also prints one environment line first (bench_env()):
 *
 *     # BENCHENV vcpus=<n> preempt=<model> thp=<enabled> hooks=<on|off> <key>=<value>...
 *
 * where the trailing keys come from the kernel command line's
 * mm_bench.<key>=<value> parameters: the runner passes accel=, exact= and
 * variant= there, since only the host knows how QEMU runs the guest.
 */
#ifndef MM_TESTS_MM_BENCH_H
#define MM_TESTS_MM_BENCH_H

#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/huge_mm.h>
#include <linux/init.h>
#include <linux/math64.h>
#include <linux/preempt.h>
#include <linux/string.h>

/* Rounds per configuration; rounds are interleaved across configurations. */
#define BENCH_ROUNDS	5

/*
 * One BENCH line: @config is "bench=<name> <key>=<value>...", @milli the
 * value in thousandths of @unit.
 */
static inline void bench_line(struct kunit *test, const char *config,
			      const char *variant, unsigned int round,
			      u64 milli, const char *unit)
{
	u32 frac;
	u64 whole = div_u64_rem(milli, 1000, &frac);

	kunit_log(KERN_INFO, test,
		  KUNIT_SUBTEST_INDENT "# BENCH %s variant=%s round=%u value=%llu.%03u unit=%s",
		  config, variant, round, whole, frac, unit);
}

/*
 * The BENCHENV line of a case: vCPUs, preemption model and THP setting as
 * the guest sees them, whether the suites' test hooks are built in
 * (hooks=on: CONFIG_MM_KUNIT_HOOKS or CONFIG_DEBUG_PAGE_RCU_FREE, which
 * production kernels do not set), and the mm_bench.* parameters of the
 * command line.
 */
static inline void bench_env(struct kunit *test)
{
	static const char prefix[] = "mm_bench.";
	const char *cmdline = saved_command_line;
	const char *p = cmdline;
	const char *thp = "unset";
	char host[192] = "";
	size_t len = 0, n;

	while (p && (p = strstr(p, prefix))) {
		bool own = p == cmdline || p[-1] == ' ';

		p += sizeof(prefix) - 1;
		n = strcspn(p, " ");
		if (own)
			len += scnprintf(host + len, sizeof(host) - len, " %.*s",
					 (int)n, p);
		p += n;
	}
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	if (test_bit(TRANSPARENT_HUGEPAGE_FLAG, &transparent_hugepage_flags))
		thp = "always";
	else if (test_bit(TRANSPARENT_HUGEPAGE_REQ_MADV_FLAG,
			  &transparent_hugepage_flags))
		thp = "madvise";
	else
		thp = "never";
#endif
	kunit_log(KERN_INFO, test,
		  KUNIT_SUBTEST_INDENT "# BENCHENV vcpus=%u preempt=%s thp=%s hooks=%s%s",
		  num_online_cpus(), preempt_model_str(), thp,
		  IS_ENABLED(CONFIG_MM_KUNIT_HOOKS) ||
		  IS_ENABLED(CONFIG_DEBUG_PAGE_RCU_FREE) ? "on" : "off", host);
}

/* Thousandths of (@count per second) over @ns nanoseconds, scaled by 1/@unit. */
static inline u64 bench_rate_milli(u64 count, u64 ns, u64 unit)
{
	if (!ns)
		ns = 1;
	/* count * 1e12 can overflow: scale in two steps */
	return div64_u64(div64_u64(count * 1000000ULL, unit) * 1000000ULL, ns);
}

#endif /* MM_TESTS_MM_BENCH_H */
