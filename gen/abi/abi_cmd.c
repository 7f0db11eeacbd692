/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_cmd.c — the commands `cubind manifest`, `cubind abi-diff` and
 * `cubind abi-check` (abi.h): arguments, inputs, outputs and exit statuses;
 * the work is abi.c's and abi_diff.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include "abi/abi.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/abi_diff.h"
#include "rules/rules.h"
#include "abi/abi_set.h"
#include "model/arena.h"
#include "abi/json.h"
#include "util/strbuf.h"

extern char **environ;

static const char usage_manifest[] =
    "usage: cubind manifest --header cuda.h [--rules FILE] [--out FILE] [--include DIR]\n"
    "\n"
    "Writes the ABI manifest of cuda.h (and cudaTypedefs.h beside it) as JSON:\n"
    "every function with its signature string and the records it reaches,\n"
    "every record's layout, every enum's members. On stdout unless --out.\n"
    "Exit status 2 on a usage error or a header refused as not a driver header\n"
    "(no cuInit, no CUresult enum, no CUDA_VERSION), 1 on any other error.\n"
    "  --include DIR    one more directory searched for the headers a library's\n"
    "                   header includes (cufile.h's cuda.h), as for generate\n";

static const char usage_diff[] =
    "usage: cubind abi-diff OLD NEW [--json]\n"
    "\n"
    "Compares two headers (cuda.h, with cudaTypedefs.h beside it) or saved ABI\n"
    "manifests (`cubind manifest`), in any combination: functions added,\n"
    "removed and changed (both signatures), record layout changes, enum member\n"
    "changes. Text, or JSON with --json. Exit 1 when something breaking\n"
    "changed (a function removed or its signature changed, a record's layout\n"
    "changed, an enum member removed or renumbered), 0 otherwise, 2 on a usage\n"
    "error.\n";

static const char usage_check[] =
    "usage: cubind abi-check MODULE --header cuda.h [--python PYTHON] [--json]\n"
    "\n"
    "Compares the C entry points a built cubind.driver exports (its capsule\n"
    "table, read through cubind.driver._abi_signatures() in PYTHON, default\n"
    "python3) with the signatures cuda.h gives. MODULE is the module's .so\n"
    "inside a cubind/ package directory, a directory holding cubind/, an\n"
    "importable module name (cubind.driver: an installed wheel), or a saved\n"
    "ABI manifest (.json). Exit 1 on any drift (a signature differs, a\n"
    "function is missing on either side), 0 when none, 2 on a usage error.\n";

static int want_help(int argc, char **argv, const char *usage)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 1;
        }
    return 0;
}

int abi_cmd_manifest(int argc, char **argv, const char *interop_dir)
{
    if (want_help(argc, argv, usage_manifest))
        return 0;
    const char *header = NULL, *out = NULL, *include = NULL, *rules_path = NULL;
    for (int i = 2; i < argc; i++) {
        const char **slot = strcmp(argv[i], "--header") == 0    ? &header
                            : strcmp(argv[i], "--out") == 0     ? &out
                            : strcmp(argv[i], "--include") == 0 ? &include
                            : strcmp(argv[i], "--rules") == 0   ? &rules_path
                                                                : NULL;
        if (slot && i + 1 < argc) {
            *slot = argv[i + 1];
            i++;
        } else {
            fprintf(stderr, "cubind manifest: %s: unknown option or missing value\n%s", argv[i],
                    usage_manifest);
            return 2;
        }
    }
    if (!header) {
        fprintf(stderr, "cubind manifest: --header is required\n%s", usage_manifest);
        return 2;
    }
    char err[2048];
    int refused = 0;
    cb_model *m;
    if (rules_path) {
        /* the header as its rules file generates it: a library's with its
         * bind-header files (cuda_runtime_api.h with driver_types.h, ...) */
        cb_rules *rules = rules_load(rules_path, err, sizeof err);
        if (!rules) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        cb_api api;
        rules_api(rules, &api);
        m = model_parse_api_in(header, api.is_library, interop_dir,
                               api.nbind_headers ? api.bind_headers : NULL, include, err,
                               sizeof err, &refused);
        rules_free(rules);
    } else {
        m = model_parse_api_in(header, model_is_library_header(header), NULL, NULL, include, err,
                               sizeof err, &refused);
    }
    if (!m) {
        fprintf(stderr, "%s\n", err);
        return refused ? 2 : 1;
    }
    aset s = {0};
    aset_from_model(&s, m, header);
    strbuf o = {0};
    aset_write_manifest(&o, &s);
    aset_free(&s);
    model_free(m);
    if (o.oom)
        arena_oom();
    int rc = 0;
    if (out) {
        /* Written beside, renamed into place: a failure leaves the old one. */
        strbuf tmp = {0};
        sb_printf(&tmp, "%s.tmp.%ld", out, (long)getpid());
        FILE *f = tmp.oom ? NULL : fopen(tmp.data, "wb");
        int bad = !f || fwrite(o.data, 1, o.len, f) != o.len;
        if (f && fclose(f) != 0)
            bad = 1;
        if (bad || rename(tmp.data, out) < 0) {
            fprintf(stderr, "%s:0: cannot write: %s\n", out, strerror(errno));
            if (tmp.data)
                unlink(tmp.data);
            rc = 1;
        }
        sb_free(&tmp);
    } else if (fwrite(o.data, 1, o.len, stdout) != o.len || fflush(stdout) != 0) {
        fprintf(stderr, "cubind manifest: cannot write to stdout\n");
        rc = 1;
    }
    sb_free(&o);
    return rc;
}

int abi_cmd_diff(int argc, char **argv)
{
    if (want_help(argc, argv, usage_diff))
        return 0;
    const char *paths[2] = {NULL, NULL};
    int json = 0, np = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' || np == 2) {
            fprintf(stderr, "cubind abi-diff: %s: unexpected argument\n%s", argv[i], usage_diff);
            return 2;
        } else {
            paths[np++] = argv[i];
        }
    }
    if (np != 2) {
        fprintf(stderr, "cubind abi-diff: needs OLD and NEW\n%s", usage_diff);
        return 2;
    }
    char err[2048];
    aset old, new;
    if (aset_load(&old, paths[0], err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (aset_load(&new, paths[1], err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        aset_free(&old);
        return 2;
    }
    abi_diff *d = abi_diff_sets(&old, &new);
    if (json)
        abi_diff_write_json(stdout, &old, &new, d, 1);
    else
        abi_diff_write_text(stdout, "abi-diff", &old, &new, d, 1);
    int rc = abi_diff_breaking(d) ? 1 : 0;
    if (fflush(stdout) != 0) {
        fprintf(stderr, "cubind abi-diff: cannot write to stdout\n");
        rc = 2;
    }
    abi_diff_free(d);
    aset_free(&old);
    aset_free(&new);
    return rc;
}

/* Runs PYTHON -c CODE ROOT NAME and reads its stdout. */
static int run_python(const char *python, const char *root, const char *name, strbuf *out)
{
    /* A failure is one line on stdout ("error: ...", exit 3), never a
     * traceback: the caller makes it its one error line. */
    static const char code[] =
        "import importlib, json, sys\n"
        "if sys.argv[1]: sys.path.insert(0, sys.argv[1])\n"
        "try:\n"
        "    s = importlib.import_module(sys.argv[2])._abi_signatures()\n"
        "except BaseException as e:\n"
        "    print('error: %s: %s' % (type(e).__name__, str(e).splitlines()[0] if str(e) else ''))\n"
        "    sys.exit(3)\n"
        "print(json.dumps(s, sort_keys=True))\n";
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *args[] = {(char *)python, "-c", (char *)code, (char *)root, (char *)name, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, python, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        errno = rc;
        return -1;
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            sb_append(out, buf, (size_t)n);
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !out->oom ? 0 : 1;
}

/* The child's "error: ..." line, without its newline (empty if none). */
static void child_error(const strbuf *out, char *why, size_t cap)
{
    const char *p = out->data && !out->oom ? strstr(out->data, "error: ") : NULL;
    if (!p) {
        snprintf(why, cap, "the import or _abi_signatures() failed");
        return;
    }
    p += 7;
    snprintf(why, cap, "%.*s", (int)strcspn(p, "\n"), p);
}

/* The module's functions and signatures, as a set without records/enums. */
static int load_module(aset *s, const char *what, const char *python, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    size_t len = strlen(what);
    struct stat st;
    if ((len > 5 && strcmp(what + len - 5, ".json") == 0))
        return aset_load(s, what, err, errlen);
    s->a = arena_create();
    if (!s->a)
        arena_oom();
    s->source = arena_strdup(s->a, what);
    s->header = "";
    char root[4096], name[256];
    if (stat(what, &st) == 0 && S_ISREG(st.st_mode)) {
        /* .../<root>/cubind/driver.cpython-XY.so */
        snprintf(root, sizeof root, "%s", what);
        char *slash = strrchr(root, '/');
        const char *file = slash ? slash + 1 : root;
        snprintf(name, sizeof name, "cubind.%.*s", (int)strcspn(file, "."), file);
        if (slash)
            *slash = '\0';
        else
            snprintf(root, sizeof root, ".");
        slash = strrchr(root, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(root, sizeof root, ".");
    } else if (stat(what, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* A directory holding cubind/, or the cubind/ package itself. */
        snprintf(root, sizeof root, "%s/cubind", what);
        if (stat(root, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(root, sizeof root, "%s", what);
        } else {
            snprintf(root, sizeof root, "%s/..", what);
        }
        snprintf(name, sizeof name, "cubind.driver");
    } else {
        root[0] = '\0';
        snprintf(name, sizeof name, "%s", what);
    }
    strbuf out = {0};
    int rc = run_python(python, root, name, &out);
    if (rc != 0) {
        char why[512];
        if (rc < 0)
            snprintf(why, sizeof why, "%s", strerror(errno));
        else
            child_error(&out, why, sizeof why);
        snprintf(err, errlen, "%s:0: could not read the module's table with %s (%s)", what, python,
                 why);
        sb_free(&out);
        return -1;
    }
    char jerr[256];
    const jv *root_v = json_parse(s->a, out.data ? out.data : "", out.len, jerr, sizeof jerr);
    sb_free(&out);
    if (!root_v || root_v->kind != JV_OBJ) {
        snprintf(err, errlen, "%s:0: _abi_signatures() printed no JSON object (%s)", what,
                 root_v ? "not an object" : jerr);
        return -1;
    }
    s->f = arena_alloc(s->a, (root_v->n + 1) * sizeof *s->f);
    for (size_t i = 0; i < root_v->n; i++) {
        if (root_v->items[i]->kind != JV_STR)
            continue;
        afunc *f = &s->f[s->nf++];
        f->name = f->abi = f->proc = root_v->keys[i];
        f->signature = root_v->items[i]->str;
    }
    return 0;
}

int abi_cmd_check(int argc, char **argv)
{
    if (want_help(argc, argv, usage_check))
        return 0;
    const char *module = NULL, *header = NULL, *python = "python3";
    int json = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if ((strcmp(argv[i], "--header") == 0 || strcmp(argv[i], "--python") == 0) &&
                   i + 1 < argc) {
            *(argv[i][2] == 'h' ? &header : &python) = argv[i + 1];
            i++;
        } else if (argv[i][0] != '-' && !module) {
            module = argv[i];
        } else {
            fprintf(stderr, "cubind abi-check: %s: unexpected argument\n%s", argv[i], usage_check);
            return 2;
        }
    }
    if (!module || !header) {
        fprintf(stderr, "cubind abi-check: needs MODULE and --header\n%s", usage_check);
        return 2;
    }
    char err[2048];
    aset mod, hdr;
    if (aset_load(&hdr, header, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (load_module(&mod, module, python, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        aset_free(&hdr);
        return 2;
    }
    /* Only the functions: the module side is its capsule table. */
    aset hf = hdr, mf = mod;
    hf.nr = hf.ne = mf.nr = mf.ne = 0;
    abi_diff *d = abi_diff_sets(&mf, &hf);
    /* Anything at all differing is drift here, added functions included. */
    int drift = abi_diff_nfunctions(d) != 0;
    if (json)
        abi_diff_write_json(stdout, &mf, &hf, d, 0);
    else {
        abi_diff_write_text(stdout, "abi-check (old: the module's table, new: the header)", &mf, &hf,
                            d, 0);
        printf("\n%s\n", drift ? "abi-check: DRIFT: the module does not match the header"
                               : "abi-check: the module matches the header");
    }
    abi_diff_free(d);
    aset_free(&mod);
    aset_free(&hdr);
    return drift ? 1 : 0;
}

