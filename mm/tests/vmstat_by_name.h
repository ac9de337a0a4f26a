/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mm counters read by name, as /proc/vmstat shows them, for the rcu-free
 * suites: on a tree without the patch that adds a counter, the case fails
 * and says so instead of not building.
 */
#ifndef MM_TESTS_VMSTAT_BY_NAME_H
#define MM_TESTS_VMSTAT_BY_NAME_H

#include <kunit/test.h>
#include <linux/mmzone.h>
#include <linux/vmstat.h>

/* The zone counter called @name; fails the case if there is none */
static inline int zone_stat_item(struct kunit *test, const char *name)
{
	int i;

	for (i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
		if (!strcmp(zone_stat_name(i), name))
			break;
	KUNIT_ASSERT_LT_MSG(test, i, NR_VM_ZONE_STAT_ITEMS,
			    "no %s in vmstat: its rcu-free patch is not applied, or CONFIG_PAGE_RCU_FREE is off",
			    name);
	return i;
}

/* Zone counter @item summed over the populated zones; any context */
static inline long zone_stat_sum(int item)
{
	struct zone *zone;
	long sum = 0;

	for_each_populated_zone(zone)
		sum += zone_page_state_snapshot(zone, item);
	return sum;
}

/* A zone counter summed over the populated zones, found by its name */
static inline long zone_stat(struct kunit *test, const char *name)
{
	return zone_stat_sum(zone_stat_item(test, name));
}

/* A vm event summed over all CPUs, found by its name; may sleep */
static inline unsigned long vm_event(struct kunit *test, const char *name)
{
	unsigned long *events;
	int i;

	for (i = 0; i < NR_VM_EVENT_ITEMS; i++)
		if (!strcmp(vm_event_name(i), name))
			break;
	KUNIT_ASSERT_LT_MSG(test, i, NR_VM_EVENT_ITEMS,
			    "no %s in vmstat: its rcu-free patch is not applied, or CONFIG_PAGE_RCU_FREE is off",
			    name);
	events = kunit_kcalloc(test, NR_VM_EVENT_ITEMS, sizeof(*events),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, events);
	all_vm_events(events);
	return events[i];
}

#endif /* MM_TESTS_VMSTAT_BY_NAME_H */
