/* Host buffers of the CPU plugins (binary's plugin.c, blas_cpu's alloc.c,
 * both through host_memory.c's bpk_block_get): 64-byte aligned; big ones
 * (blas_cpu: from 4 MiB, binary: from 32 MiB, where glibc would map them
 * afresh each time) their own mapping advised MADV_HUGEPAGE (the kernel
 * marks it "hg" in /proc/self/smaps' VmFlags), so a big output costs a few
 * huge-page faults instead of one fault per 4 KiB; smaller ones from the
 * heap. memory_info
 * counts them either way. Talks to each plugin as the core does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"
#include "direct_plugin.h"

/* The VmFlags line of the mapping holding p, or "" if none has it. */
static void vmflags_of(const void *p, char *flags, size_t cap)
{
    flags[0] = '\0';
    FILE *f = fopen("/proc/self/smaps", "r");
    cr_assert_not_null(f, "no /proc/self/smaps");
    char line[512];
    bool inside = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, cap, "%s", line + 8);
            break;
        }
    }
    fclose(f);
}

static bool has_flag(const char *flags, const char *flag)
{
    char padded[600];
    snprintf(padded, sizeof padded, " %s", flags);
    char want[8];
    snprintf(want, sizeof want, " %s ", flag);
    char *nl = strchr(padded, '\n');
    if (nl)
        *nl = ' ';
    return strstr(padded, want) != NULL;
}

static void big_buffers_are_huge_page_mappings(const char *path)
{
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0)
        cr_skip_test("this kernel has no transparent huge pages (madvise refuses the advice)");
    bpt_direct d;
    bpt_direct_open(&d, path, BP_ABI_MINOR);
    const bp_plugin *p = d.p;
    void *dev = d.dev, *big = NULL, *small = NULL;
    size_t nbig = ((size_t)33 << 20) + 12, nsmall = 1000;
    cr_assert_eq(p->alloc(dev, nbig, &big), BP_OK);
    cr_assert_eq(p->alloc(dev, nsmall, &small), BP_OK);
    cr_assert_eq((uintptr_t)big % 64, 0, "%s: %p is not 64-byte aligned", path, big);
    cr_assert_eq((uintptr_t)small % 64, 0, "%s: %p is not 64-byte aligned", path, small);

    char flags[512];
    vmflags_of(big, flags, sizeof flags);
    cr_assert(has_flag(flags, "hg"), "%s: a 33 MiB buffer's mapping is not advised huge pages: %s",
              path, flags);
    vmflags_of(small, flags, sizeof flags);
    cr_assert(flags[0] != '\0', "%s: no mapping holds the small buffer", path);
    cr_assert_not(has_flag(flags, "hg"), "%s: a 1000-byte buffer got a mapping of its own: %s",
                  path, flags);

    /* every byte of the big one, the last included, is the caller's */
    unsigned char *src = malloc(nbig), *back = malloc(nbig);
    for (size_t k = 0; k < nbig; k++)
        src[k] = (unsigned char)(k * 131 + 7);
    cr_assert_eq(p->write(dev, big, 0, src, nbig), BP_OK);
    cr_assert_eq(p->read(dev, big, 0, back, nbig), BP_OK);
    cr_assert_eq(memcmp(src, back, nbig), 0, "%s: the big buffer did not round-trip", path);
    free(src), free(back);

    bp_memory_info mi = {.struct_size = sizeof mi};
    cr_assert_eq(p->memory_info(dev, &mi), BP_OK);
    cr_assert_eq(mi.used, nbig + nsmall, "%s: used %llu", path, (unsigned long long)mi.used);
    p->free(dev, big);
    p->free(dev, small);
    cr_assert_eq(p->memory_info(dev, &mi), BP_OK);
    cr_assert_eq(mi.used, 0, "%s: used %llu after freeing", path, (unsigned long long)mi.used);
    bpt_direct_close(&d);
}

Test(host_buffers, binary_buffers_of_32_mib_and_more_are_huge_page_mappings)
{
    big_buffers_are_huge_page_mappings(BPT_BUILD_PLUGIN_DIR "/bp_binary.so");
}

Test(host_buffers, blas_cpu_buffers_of_4_mib_and_more_are_huge_page_mappings)
{
    if (access(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so", R_OK) != 0)
        cr_skip_test("blas_cpu is not built here (no OpenBLAS)");
    big_buffers_are_huge_page_mappings(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so");
}

/* ---- memory used in place (wrap) ---------------------------------------- */

static int releases[2];
static void count_release(void *ctx) { (*(int *)ctx)++; }

/* A host plugin's buffer handle is the memory's address, so two live wraps
 * of one address would share a handle and free() could not tell whose
 * release to run: the second is refused (the core shares the first buffer
 * instead, or copies). Once the first is freed, the address may be wrapped
 * again. */
static void a_second_wrap_of_live_memory_is_refused(const char *path)
{
    bpt_direct d;
    bpt_direct_open(&d, path, BP_ABI_MINOR);
    const bp_plugin *p = d.p;
    static double memory[4] = {1, 2, 3, 4};
    void *first = NULL, *second = NULL;
    releases[0] = releases[1] = 0;
    cr_assert_eq(p->wrap(d.dev, BP_MEMORY_HOST, memory, sizeof memory, count_release, &releases[0],
                         &first), BP_OK);
    cr_assert_eq(p->wrap(d.dev, BP_MEMORY_HOST, memory, sizeof memory, count_release, &releases[1],
                         &second), BP_ERR_UNSUPPORTED_OP,
                 "%s: the same live memory was wrapped twice", path);
    cr_assert_null(second);
    cr_assert_eq(releases[0] + releases[1], 0, "%s: a refused wrap ran a release", path);
    p->free(d.dev, first);
    cr_assert_eq(releases[0], 1);
    cr_assert_eq(p->wrap(d.dev, BP_MEMORY_HOST, memory, sizeof memory, count_release, &releases[1],
                         &second), BP_OK, "%s: memory given back cannot be wrapped again", path);
    p->free(d.dev, second);
    cr_assert_eq(releases[1], 1);
    cr_assert_eq(releases[0], 1, "a release ran twice");
    bpt_direct_close(&d);
}

Test(host_buffers, binary_refuses_a_second_wrap_of_live_memory)
{
    a_second_wrap_of_live_memory_is_refused(BPT_BUILD_PLUGIN_DIR "/bp_binary.so");
}

Test(host_buffers, blas_cpu_refuses_a_second_wrap_of_live_memory)
{
    if (access(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so", R_OK) != 0)
        cr_skip_test("blas_cpu is not built here (no OpenBLAS)");
    a_second_wrap_of_live_memory_is_refused(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so");
}
