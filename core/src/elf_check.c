/* Checking a plugin file before dlopen.
 *
 * dlopen maps a file's segments as its program headers describe them; when
 * the file is shorter than that (a copy cut short, a full disk), touching a
 * segment raises SIGBUS in the process that called dlopen, which no caller
 * can recover from. So a file is opened only if it is a regular, readable,
 * non-empty ELF shared object for this machine whose every segment lies
 * within the file. (The file can still change between this check and dlopen;
 * this guards against broken files, not against an attacker who can write
 * to the plugin path.) */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#if defined(__x86_64__)
#define BP__ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define BP__ELF_MACHINE EM_AARCH64
#elif defined(__i386__)
#define BP__ELF_MACHINE EM_386
#elif defined(__arm__)
#define BP__ELF_MACHINE EM_ARM
#elif defined(__powerpc64__)
#define BP__ELF_MACHINE EM_PPC64
#elif defined(__riscv)
#define BP__ELF_MACHINE EM_RISCV
#elif defined(__s390x__)
#define BP__ELF_MACHINE EM_S390
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BP__ELF_DATA ELFDATA2LSB
#else
#define BP__ELF_DATA ELFDATA2MSB
#endif

#if __SIZEOF_POINTER__ == 8
#define BP__ELF_CLASS ELFCLASS64
#else
#define BP__ELF_CLASS ELFCLASS32
#endif

/* Bytes [off, off + len) of the file; false if the file is shorter. */
static bool read_at(int fd, uint64_t off, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

static bool check_fd(int fd, char *why, size_t cap)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        char eb[128];
        snprintf(why, cap, "cannot stat the file: %s", strerror_r(errno, eb, sizeof eb));
        return false;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(why, cap, "not a regular file (%s)",
                 S_ISDIR(sb.st_mode) ? "a directory" : "a device, pipe or socket");
        return false;
    }
    uint64_t size = (uint64_t)sb.st_size;
    if (size == 0) {
        snprintf(why, cap, "empty file (0 bytes): reinstall or rebuild the plugin");
        return false;
    }
    ElfW(Ehdr) eh;
    if (size < sizeof eh || !read_at(fd, 0, &eh, sizeof eh) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        snprintf(why, cap, "not an ELF file (%llu bytes%s): a plugin is a shared object built "
                 "with add_library(... MODULE ...) or -shared",
                 (unsigned long long)size, size < sizeof eh ? ", too short for an ELF header" : "");
        return false;
    }
    if (eh.e_ident[EI_CLASS] != BP__ELF_CLASS || eh.e_ident[EI_DATA] != BP__ELF_DATA) {
        snprintf(why, cap, "an ELF file of another word size or byte order than this %d-bit "
                 "library: rebuild the plugin for this machine", (int)(8 * sizeof(void *)));
        return false;
    }
#ifdef BP__ELF_MACHINE
    if (eh.e_machine != BP__ELF_MACHINE) {
        snprintf(why, cap, "an ELF file for another machine (e_machine %u, this machine is %u): "
                 "rebuild the plugin for this machine", (unsigned)eh.e_machine,
                 (unsigned)BP__ELF_MACHINE);
        return false;
    }
#endif
    if (eh.e_type != ET_DYN) {
        snprintf(why, cap, "not a shared object (ELF type %u; an executable or object file?)",
                 (unsigned)eh.e_type);
        return false;
    }
    if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(ElfW(Phdr))) {
        snprintf(why, cap, "a malformed ELF file (%u program headers of %u bytes)",
                 (unsigned)eh.e_phnum, (unsigned)eh.e_phentsize);
        return false;
    }
    uint64_t ph_end = (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr));
    if (eh.e_phoff > size || ph_end > size) {
        snprintf(why, cap, "truncated: the file has %llu bytes but its program headers end at "
                 "byte %llu; reinstall or rebuild the plugin",
                 (unsigned long long)size, (unsigned long long)ph_end);
        return false;
    }
    for (unsigned k = 0; k < eh.e_phnum; k++) {
        ElfW(Phdr) ph;
        if (!read_at(fd, eh.e_phoff + (uint64_t)k * sizeof ph, &ph, sizeof ph)) {
            snprintf(why, cap, "cannot read program header %u", k);
            return false;
        }
        uint64_t off = ph.p_offset, len = ph.p_filesz;
        if (len == 0)
            continue;
        if (off > size || len > size - off) {
            snprintf(why, cap, "truncated: the file has %llu bytes but segment %u needs bytes "
                     "up to %llu; reinstall or rebuild the plugin",
                     (unsigned long long)size, k, (unsigned long long)(off + len));
            return false;
        }
    }
    return true;
}

bool bp__elf_check(const char *path, char *why, size_t cap)
{
    /* O_NONBLOCK: a FIFO named like a plugin must not hang the scan. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        char eb[128];
        snprintf(why, cap, "cannot open the file: %s", strerror_r(errno, eb, sizeof eb));
        return false;
    }
    bool ok = check_fd(fd, why, cap);
    close(fd);
    return ok;
}
