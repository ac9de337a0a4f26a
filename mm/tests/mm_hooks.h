/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test hooks: interfaces the suites use that neither Linux 7.3 nor the
 * series as their seeds describe them have.  Our implementation adds them in
 * patches of their own (patches/hooks/), so that a posting of a series
 * without them is still judged on what it does.
 *
 * Every hook is detected from the tree's sources (CONFIG_MM_KUNIT_HOOK_*,
 * computed by mm/tests/Kconfig) or, for a tracepoint, by name at run time.
 * When one is absent, the part of a case that needs it is skipped, with the
 * hook's name in the reason, and the rest of the case still decides:
 *
 *	MM_HOOK_REQUIRE(test, RCU_FREE_HOLD);	whole case: kunit_skip()
 *	if (mm_hook(test, RCU_FREE_HOLD, "the queue count"))
 *		...				one part: logged when skipped
 *
 * The runner counts the "hook absent:" lines (scripts/mmkunit/judge.py), and
 * with HOOKS=required a case skipped for a missing hook is a failure.
 *
 * Stand-ins below let the suites build where a hook is absent; they are
 * never called there (every call sits behind mm_hook() or MM_HOOK()).
 */
#ifndef MM_TESTS_MM_HOOKS_H
#define MM_TESTS_MM_HOOKS_H

#include <kunit/test.h>
#include <linux/jump_label.h>

/* Whether hook @name (RCU_FREE_HOLD, ...) is in the tree */
#define MM_HOOK(name)	IS_ENABLED(CONFIG_MM_KUNIT_HOOK_##name)

/* The reason every skip for a missing hook starts with */
#define MM_HOOK_ABSENT	"hook absent: "

/* Skip the whole case when hook @name is absent */
#define MM_HOOK_REQUIRE(test, name)					\
	do {								\
		if (!MM_HOOK(name))					\
			kunit_skip(test, MM_HOOK_ABSENT "%s",		\
				   mm_hook_name_##name);		\
	} while (0)

/*
 * Whether the part of a case described by @part can run: true with hook
 * @name; without it, logs that the part was skipped and returns false.
 */
#define mm_hook(test, name, part)					\
	mm_hook_part(test, MM_HOOK(name), mm_hook_name_##name, part)

static inline bool mm_hook_part(struct kunit *test, bool present,
				const char *hook, const char *part)
{
	if (!present)
		kunit_info(test, MM_HOOK_ABSENT "%s: %s not checked", hook, part);
	return present;
}

/* The same for a tracepoint found (or not) by name at run time */
static inline bool mm_hook_trace(struct kunit *test, bool found,
				 const char *tracepoint, const char *part)
{
	if (!found)
		kunit_info(test, MM_HOOK_ABSENT "tracepoint %s: %s not checked",
			   tracepoint, part);
	return found;
}

/* The hooks: what the reasons call them */
#define mm_hook_name_RCU_FREE_HOLD \
	"rcu_free_hold() (CONFIG_DEBUG_PAGE_RCU_FREE)"
#define mm_hook_name_RCU_FREE_NR_EARLY \
	"rcu_free_nr_early() (the grace-period check)"
#define mm_hook_name_RCU_FREE_DRAIN_HELPS \
	"rcu_free_drain_helps_hook() (CONFIG_MM_KUNIT_HOOKS)"
#define mm_hook_name_RCU_FREE_TURN_TAKE \
	"rcu_free_turn_hook() (CONFIG_MM_KUNIT_HOOKS)"
#define mm_hook_name_COMPACTION_FREE_RCU \
	"compaction_free_rcu_hook() (CONFIG_MM_KUNIT_HOOKS)"
#define mm_hook_name_FILEMAP_READ_RCU_CAN_COPY \
	"filemap_read_rcu_can_copy_hook() (CONFIG_MM_KUNIT_HOOKS)"
#define mm_hook_name_FILEMAP_READ_RCU_LOOKUP \
	"filemap_read_rcu_lookup_hook() (CONFIG_MM_KUNIT_HOOKS)"
#define mm_hook_name_FILEMAP_READ_RCU_IN_SLOT \
	"filemap_read_rcu_in_slot_hook() (CONFIG_MM_KUNIT_HOOKS)"
#define mm_hook_name_FILEMAP_READ_RCU_WINDOW \
	"filemap_read_rcu_window() (CONFIG_MM_KUNIT_HOOKS)"

/* The tracepoints, found by name (mm_test_probe()) */
#define MM_HOOK_TRACE_FILEMAP_READ_RCU	"mm_filemap_read_rcu"
#define MM_HOOK_TRACE_SHMEM_READ_BATCH	"mm_shmem_read_batch"

/* Stand-ins where a hook is absent: never called */
#if !MM_HOOK(RCU_FREE_HOLD)
static inline void rcu_free_hold(void) { }
static inline void rcu_free_release(void) { }
static inline void rcu_free_wait_grace(void) { }
static inline unsigned long rcu_free_nr_queued(void) { return 0; }
static inline unsigned long rcu_free_nr_listed(void) { return 0; }
#endif
#if !MM_HOOK(RCU_FREE_NR_EARLY)
static inline unsigned long rcu_free_nr_early(void) { return 0; }
#endif
#if !MM_HOOK(RCU_FREE_TURN_TAKE)
enum rcu_free_turn_hook {
	RCU_FREE_TURN_TAKEN = -1,
	RCU_FREE_TURN_NATURAL,
	RCU_FREE_TURN_DUE,
};

static inline void rcu_free_turn_hook(enum rcu_free_turn_hook how) { }
static inline void rcu_free_turn_take_hook(bool take) { }
#endif

/*
 * The lockless_copy suite: the exports it unit-tests (static in the
 * seed).  Stand-ins where absent: never called.
 */
#include <linux/mm_types.h>
#include <linux/xarray.h>

#if !MM_HOOK(FILEMAP_READ_RCU_CAN_COPY)
static inline bool filemap_read_rcu_can_copy_hook(struct folio *folio,
						  pgoff_t index)
{
	return false;
}
#endif
#if !MM_HOOK(FILEMAP_READ_RCU_LOOKUP)
static inline struct folio *
filemap_read_rcu_lookup_hook(struct xa_state *xas, pgoff_t index)
{
	return NULL;
}
#endif
#if !MM_HOOK(FILEMAP_READ_RCU_IN_SLOT)
static inline bool filemap_read_rcu_in_slot_hook(struct xa_state *xas,
						 pgoff_t index,
						 struct folio *folio)
{
	return false;
}
#endif

#if !MM_HOOK(FILEMAP_READ_RCU_WINDOW)
static inline void filemap_read_rcu_window(struct folio *folio, pgoff_t index,
					   pgoff_t end, bool checked)
{
}

/* Never enabled where the hook is absent: the case skips first */
static __maybe_unused DEFINE_STATIC_KEY_FALSE(filemap_read_rcu_window_on);
#endif

#endif /* MM_TESTS_MM_HOOKS_H */
