/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz-session-shim.h - included (clang -include) before backend/core/session.c when it is built
 * for tests/fuzz/fuzz-session.c: the session's calls of ioctl(), open(), mmap() and munmap()
 * go to that target's stand-in for the bridge. The system headers come first, so that only
 * calls are renamed; function-like macros leave fields named "open" alone.
 */
#ifndef VIACAM_FUZZ_SESSION_SHIM_H
#define VIACAM_FUZZ_SESSION_SHIM_H
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>

int fuzz_ioctl(int fd, unsigned long request, ...);
int fuzz_open(const char *path, int flags, ...);
void *fuzz_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
int fuzz_munmap(void *addr, size_t len);

#define ioctl(...) fuzz_ioctl(__VA_ARGS__)
#define open(...) fuzz_open(__VA_ARGS__)
#define mmap(...) fuzz_mmap(__VA_ARGS__)
#define munmap(...) fuzz_munmap(__VA_ARGS__)
#endif /* VIACAM_FUZZ_SESSION_SHIM_H */
