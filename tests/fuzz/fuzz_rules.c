/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_rules.c — libFuzzer target for the special-cases file parser
 * (gen/rules/rules.c). The input is written to a memfd and loaded with
 * rules_load("/proc/self/fd/N"); a loaded set is checked against the
 * directive table, bound to an empty model (rules_bind, rules_unmatched)
 * and freed. Failure must come with a "path:line: message". It links the
 * model's lookups (gen/model/model.c) but not the libclang parser.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rules/define_enum.h"
#include "rules/rules.h"
#include "rules/rules_bind.h"

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
    /* every rule is within its directive's arity (rules_directives.def);
       regressions/rules/ubsan-find2-null-arg once made a lookup read a
       one-argument rule's missing args[1]: the binding reads arguments
       by each directive's target, so it is bound here (against an empty
       model: every rule resolves to nothing) and its unmatched rules
       counted. */
    for (size_t i = 0; i < r->nrules; i++) {
        const cb_rule *x = &r->rules[i];
        if ((unsigned)x->directive >= CB_NDIRECTIVES || x->nargs > CB_RULE_MAX_ARGS)
            abort();
        const cb_directive_info *d = rules_directive(x->directive);
        if (x->nargs < d->least || x->nargs > d->most)
            abort();
        for (size_t j = 0; j < x->nargs; j++)
            if (!x->args[j])
                abort();
    }
    cb_model m = {0};
    m.header = "fuzz.h";
    /* define-enum rules select no constant of an empty model: no class,
     * no error */
    cb_api api;
    rules_api(r, &api);
    if (define_enums(r, &api, &m, err, sizeof err) < 0 || m.nenums)
        abort();
    cb_facts *b = rules_bind(r, &m);
    if (rules_unmatched(b, NULL) > r->nrules)
        abort();
    rules_unbind(b);
    rules_free(r);
    return 0;
}
