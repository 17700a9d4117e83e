/* Opens fine but claims INT32_MAX devices: a plugin defect the core refuses
 * instead of sizing tables by it. */
#include <stdint.h>

#include "toy.h"

static int32_t huge_count(void *state) { (void)state; return INT32_MAX; }

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("huge_devices"), .device_count = huge_count};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }
