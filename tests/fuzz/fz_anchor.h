/* Keeping the plugins loaded for the whole fuzzing process. */
#ifndef FZ_ANCHOR_H
#define FZ_ANCHOR_H

#include <backplane/backplane.h>

/* A context, made once and never destroyed, that has loaded every built-in
 * plugin. libFuzzer registers the coverage counters of each instrumented
 * shared object when it is loaded and clears them before every input: a
 * plugin unloaded by bp_context_destroy would leave it clearing unmapped
 * memory. With this context alive, the inputs' own contexts open and close
 * the plugins without ever unmapping them. dir: where to write its ini file. */
bp_context *fz_anchor(const char *dir);

/* The file the anchor loaded plugin `name` from ("" if none): naming it by
 * path opens the same, already mapped, object. */
const char *fz_plugin_file(const char *name);

#endif
