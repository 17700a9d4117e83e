/* A minimal host-memory plugin the broken test plugins are made from. Each
 * test plugin includes this, then breaks one thing on purpose. They are
 * built as plugins of ABI 1.5, taking the ops of 1.0 through the typed
 * entries (unary, binary, ...) as plugins of that era do. */
#ifndef BPT_TOY_H
#define BPT_TOY_H

#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *toy_host;

static bp_status toy_open(const bp_host_api *host, void **state)
{
    toy_host = host;
    *state = (void *)host;
    return BP_OK;
}
static void toy_close(void *state) { (void)state; }
static int32_t toy_device_count(void *state) { (void)state; return 1; }
static bp_status toy_device_info(void *state, int32_t index, bp_device_info *info)
{
    (void)state; (void)index;
    strcpy(info->name, "toy");
    info->host_addressable = false;
    return BP_OK;
}
static bp_status toy_device_open(void *state, int32_t index, void **dev)
{
    (void)index;
    *dev = state;
    return BP_OK;
}
static void toy_device_close(void *dev) { (void)dev; }
static bp_status toy_alloc(void *dev, size_t bytes, void **buffer)
{
    (void)dev;
    *buffer = malloc(bytes ? bytes : 1);
    return *buffer ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}
static void toy_free(void *dev, void *buffer) { (void)dev; free(buffer); }
static bp_status toy_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    (void)dev;
    memcpy((char *)buffer + offset, src, bytes);
    return BP_OK;
}
static bp_status toy_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    (void)dev;
    memcpy(dst, (const char *)buffer + offset, bytes);
    return BP_OK;
}

#define TOY_DESCRIPTOR_FIELDS(NAME)                                           \
    .struct_size = sizeof(bp_plugin), .abi_major = BP_ABI_MAJOR,              \
    .abi_minor = 5, .name = NAME, .version = "0.0.1",                         \
    .description = "a deliberately broken test plugin", .open = toy_open,     \
    .close = toy_close, .device_count = toy_device_count,                     \
    .device_info = toy_device_info, .device_open = toy_device_open,           \
    .device_close = toy_device_close, .alloc = toy_alloc, .free = toy_free,   \
    .write = toy_write, .read = toy_read

#endif
