/* SPDX-License-Identifier: Apache-2.0 */
/*
 * glibc_pins.h — binds the runtime's few glibc functions whose default
 * version is newer than glibc 2.17 to their first versions, so that
 * _runtime built on a new glibc still loads on an old one.
 *
 * glibc 2.34 moved dlopen, dlclose, dlsym, dlerror, dlinfo, dladdr,
 * pthread_once, pthread_create and pthread_join (a test hook of rt_module.c) from
 * libdl and libpthread into libc and gave them a new default version
 * (GLIBC_2.34); a module linked against it needs glibc 2.34 at run time,
 * though the functions have not changed. libc keeps the old versions, so a
 * reference pinned to one of them links and runs on the new glibc as on the
 * old, where libdl.so.2 / libpthread.so.0 define them (build.ninja's
 * link_ext names both libraries: an old glibc's python may not load them).
 * With these pins the highest version _runtime needs is GLIBC_2.16
 * (aligned_alloc), and its wheels are manylinux_2_17
 * (packaging/mkwheel.py computes the tag from the files).
 *
 * x86_64 only (the versions are per architecture).
 *
 * Invariant: every .c of the runtime that calls one of these functions
 * includes this header after the system headers declaring them. Sanitizer
 * builds are left alone (their runtimes intercept these functions; they
 * are never shipped).
 */
#ifndef CUBIND_GLIBC_PINS_H
#define CUBIND_GLIBC_PINS_H

#include <dlfcn.h>
#include <pthread.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CUBIND_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUBIND_SANITIZED 1
#endif

#if defined(__GLIBC__) && !defined(CUBIND_SANITIZED)
#if defined(__x86_64__)
__asm__(".symver dlopen, dlopen@GLIBC_2.2.5");
__asm__(".symver dlclose, dlclose@GLIBC_2.2.5");
__asm__(".symver dlsym, dlsym@GLIBC_2.2.5");
__asm__(".symver dlerror, dlerror@GLIBC_2.2.5");
__asm__(".symver dlinfo, dlinfo@GLIBC_2.3.3");
__asm__(".symver dladdr, dladdr@GLIBC_2.2.5");
__asm__(".symver pthread_once, pthread_once@GLIBC_2.2.5");
__asm__(".symver pthread_create, pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_join, pthread_join@GLIBC_2.2.5");
#endif /* other architectures: not built or tested here; unpinned, so their
        * wheels' tag is whatever glibc their build machine has */
#endif

#endif
