/* backplane: the umbrella header. Link with -lbackplane.
 *
 *   bp_context_create -> bp_backend_default / bp_backend_get
 *   -> bp_tensor_from_host -> ops -> bp_tensor_to_host -> bp_tensor_release
 *   -> bp_context_destroy
 *
 * Every fallible call returns bp_status (BP_OK is 0); bp_last_error() says
 * what went wrong in this thread. The library never writes to stdout. */
#ifndef BACKPLANE_H
#define BACKPLANE_H

#include "comm.h"
#include "context.h"
#include "dlpack.h"
#include "dtype.h"
#include "export.h"
#include "format.h"
#include "graph.h"
#include "optim.h"
#include "nn.h"
#include "opcodes.h"
#include "ops.h"
#include "safetensors.h"
#include "stats.h"
#include "status.h"
#include "tensor.h"

#define BP_VERSION_MAJOR 0
#define BP_VERSION_MINOR 1
#define BP_VERSION_PATCH 0

#endif
