/* backplane: symbol visibility. Everything not marked BP_API is hidden. */
#ifndef BACKPLANE_EXPORT_H
#define BACKPLANE_EXPORT_H

#if defined(BP_BUILDING_LIBRARY) && defined(__GNUC__)
#define BP_API __attribute__((visibility("default")))
#else
#define BP_API
#endif

/* A plugin exports exactly one symbol, bp_plugin_entry, with this macro. */
#if defined(__GNUC__)
#define BP_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define BP_PLUGIN_EXPORT
#endif

#endif
