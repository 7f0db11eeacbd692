/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_rules.c — libFuzzer target for the special-cases file parser
 * (gen/rules.c). The input is written to a memfd and loaded with
 * rules_load("/proc/self/fd/N"); a loaded set is queried with rules_find and
 * rules_find2 (names taken from its own rules and a few fixed ones) and
 * freed. Failure must come with a "path:line: message". It links the
 * model's lookups (gen/model.c, for rules_unmatched, which is not fuzzed)
 * but not the libclang parser.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz_rules", 0)) < 0)
        abort();
    if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    char err[512];
    err[0] = 0;
    cb_rules *r = rules_load(path, err, sizeof err);
    if (!r) {
        if (strncmp(err, path, strlen(path)) != 0 || err[strlen(path)] != ':')
            abort(); /* an error that does not name the file */
        return 0;
    }
    /* rules_find and rules_find2 are asked about every directive, of any
       number of arguments (gen/rules.h: a rule with fewer arguments never
       matches); regressions/rules/ubsan-find2-null-arg once made
       rules_find2 read a one-argument rule's missing args[1]. */
    static const char *const one[] = {"value-handle", "keep-gil", "unloads-kernels",
                                      "attribute-type", "no-such-directive", ""};
    static const char *const two[] = {"rename-param", "rename-param-in", "inout", "in", "out",
                                      "fixed", "count", "kernel-params", "callback",
                                      "attribute-output", "attribute-input", "kernel-extra",
                                      "undo"};
    for (size_t i = 0; i < r->nrules; i++) {
        const cb_rule *x = &r->rules[i];
        if (!x->directive || x->nargs > CB_RULE_MAX_ARGS)
            abort();
        for (size_t j = 0; j < x->nargs; j++)
            if (!x->args[j])
                abort();
        const char *a0 = x->nargs > 0 ? x->args[0] : "cuInit";
        const char *a1 = x->nargs > 1 ? x->args[1] : "Flags";
        for (size_t d = 0; d < sizeof one / sizeof *one; d++)
            rules_find(r, one[d], a0), rules_find2(r, one[d], a0, a1);
        for (size_t d = 0; d < sizeof two / sizeof *two; d++) {
            rules_find(r, two[d], a0);
            rules_find2(r, two[d], a0, a1);
        }
        rules_find(r, x->directive, a0);
        rules_find2(r, x->directive, a0, a1);
    }
    rules_free(r);
    return 0;
}
