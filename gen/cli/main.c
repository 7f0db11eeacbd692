/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — the `cubind` command line: generate, dump, classify, verify,
 * rules, and the ABI commands (abi_cmd.c).
 *
 * Errors go to stderr as "file:line: message" with exit status 1; usage
 * errors, and a header refused for lacking what the bindings need (not a
 * driver header: no cuInit, no CUresult enum, no CUDA_VERSION; a library's
 * header without the result enum its rules file names), exit with 2.
 * Nothing is written unless everything rendered, and then the whole set of
 * outputs replaces the old one or none of it does (render_write).
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/abi.h"
#include "util/checksum.h"
#include "classify/classify.h"
#include "cli/classify_json.h"
#include "model/dump.h"
#include "model/model.h"
#include "render/render.h"
#include "rules/rules.h"
#include "rules/define_enum.h"
#include "rules/rules_bind.h"
#include "tmpl/tmpl.h"

/* The version of pyproject.toml, passed by the build (build.ninja). */
#ifndef CUBIND_VERSION
#error "CUBIND_VERSION is not defined (build with ninja, which passes it)"
#endif

static const char usage_main[] =
    "usage: cubind COMMAND [options]\n"
    "       cubind --version\n"
    "\n"
    "commands:\n"
    "  generate --header cuda.h --out DIR   write the bindings' sources into DIR\n"
    "  dump --header cuda.h                 print the header's model as JSON\n"
    "  classify --header cuda.h             print how each function crosses (JSON)\n"
    "  verify FILE...                       check generated files' checksums\n"
    "  rules                                list the directives of a rules file\n"
    "  manifest --header cuda.h             print the header's ABI manifest (JSON)\n"
    "  abi-diff OLD NEW [--json]            ABI changes between two headers/manifests\n"
    "  abi-check MODULE --header cuda.h     compare a built module's table with a header\n"
    "\n"
    "`cubind COMMAND --help` describes each command.\n";

static const char usage_generate[] =
    "usage: cubind generate --header cuda.h --out DIR [--templates DIR] [--rules FILE]\n"
    "                       [--include DIR] [--depfile FILE] [--header-docs] [--list-unmatched]\n"
    "\n"
    "Parses cuda.h (and cudaTypedefs.h beside it) and writes the generated\n"
    "sources into DIR, which must exist. Every file is rendered first and\n"
    "renamed into place only when all succeeded. Functions not bound yet are\n"
    "listed in DIR/unsupported.txt and counted on stderr. Exit status 2 on a\n"
    "usage error or a header refused as not a driver header (no cuInit, no\n"
    "CUresult enum, no CUDA_VERSION) or as lacking the result enum its rules\n"
    "file names, 1 on any other error.\n"
    "  --templates DIR  templates (default: templates/ beside the build dir)\n"
    "  --rules FILE     special cases (default: gen/rules.txt likewise)\n"
    "  --include DIR    one more directory searched for the headers a library's\n"
    "                   header includes (cufile.h's cuda.h: the toolkit's\n"
    "                   include directory when cufile.h comes from elsewhere)\n"
    "  --depfile FILE   write the inputs read (headers, templates, rules) as a\n"
    "                   Makefile-style dependency file for Ninja\n"
    "  --header-docs    put the header's documentation comments into the\n"
    "                   docstrings (reST); without it the generated files hold\n"
    "                   none of the header's prose, only a link to NVIDIA's\n"
    "                   documentation (use it on your own header, at build time)\n"
    "  --list-unmatched name every rule that matches nothing in this header\n"
    "                   (rules written for other releases); without it one\n"
    "                   summary line counts them\n";

static const char usage_dump[] =
    "usage: cubind dump --header cuda.h [--rules FILE]\n"
    "\n"
    "Prints the model of cuda.h as JSON on stdout: functions (public name,\n"
    "ABI symbol, cuGetProcAddress name and version), enums, records with\n"
    "sizes and offsets, typedefs, handles, callbacks, integer macros. A\n"
    "header not named cuda.h is read as a library's (nvrtc.h, nvJitLink.h:\n"
    "no cudaTypedefs.h; symbols for dlsym). With --rules, the header is\n"
    "read as that rules file's API reads it (a library's or not, and with\n"
    "its bind-header files: gen/runtime.rules).\n";

static const char usage_rules[] =
    "usage: cubind rules\n"
    "\n"
    "Lists the directives a rules file (gen/rules.txt, gen/<api>.rules) takes,\n"
    "with their arguments and meaning. A rule's FUNCTION is a function's public\n"
    "name (cuMemAlloc) or the symbol its header declares (cuMemAlloc_v2); a\n"
    "RECORD is a record's tag or typedef. `cubind generate --list-unmatched`\n"
    "names the rules that match nothing in a header.\n";

static const char usage_classify[] =
    "usage: cubind classify --header cuda.h [--rules FILE] [--include DIR]\n"
    "\n"
    "Prints the classification `cubind generate` renders, as JSON on stdout:\n"
    "every function (supported or not, with the reason), each parameter with\n"
    "its shape, direction (in, out, inout, none), element kind and the rules\n"
    "that applied to it; the handle classes; every struct and union with its\n"
    "fields' kinds; the rules that match nothing in the header. Deterministic:\n"
    "a change of the classifier or the rules shows as a diff of it\n"
    "(tests/gen/data/classify_cuda13.json). Exit status as for generate.\n"
    "  --rules FILE     special cases (default: gen/rules.txt beside the build\n"
    "                   dir; give gen/<api>.rules for a library's header)\n"
    "  --include DIR    as for generate\n";

static const char usage_verify[] =
    "usage: cubind verify FILE...\n"
    "\n"
    "Checks that each generated file's body matches the checksum stamped in\n"
    "its header: a hand edit of generated code fails. Exit 1 on a mismatch.\n";

typedef struct {
    const char *header, *out, *templates, *rules, *depfile, *include;
    int help, header_docs, list_unmatched;
} options;

static int parse_options(int argc, char **argv, options *o, const char *usage)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = strcmp(a, "--header") == 0      ? &o->header
                            : strcmp(a, "--out") == 0       ? &o->out
                            : strcmp(a, "--templates") == 0 ? &o->templates
                            : strcmp(a, "--rules") == 0     ? &o->rules
                            : strcmp(a, "--depfile") == 0   ? &o->depfile
                            : strcmp(a, "--include") == 0   ? &o->include
                                                            : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = 1;
            fputs(usage, stdout);
            return 0;
        }
        /* flags of generate only (its usage names them) */
        int *flag = usage != usage_generate                ? NULL
                    : strcmp(a, "--header-docs") == 0    ? &o->header_docs
                    : strcmp(a, "--list-unmatched") == 0 ? &o->list_unmatched
                                                         : NULL;
        if (flag) {
            *flag = 1;
            continue;
        }
        if (!slot || i + 1 >= argc) {
            fprintf(stderr, "cubind: %s: %s\n%s", a, slot ? "needs a value" : "unknown option",
                    usage);
            return -1;
        }
        *slot = argv[++i];
    }
    return 0;
}

/* The source tree: the parent of the directory holding this executable. */
static void source_path(const char *rel, char *out, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(out, cap, "%s", rel);
        return;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    int w = snprintf(out, cap, "%s/%s", exe, rel);
    if (w < 0 || (size_t)w >= cap)
        snprintf(out, cap, "%s", rel);
}

static int is_directory(const char *path);

/* runtime/interop of the source tree (cubind_interop.h and the GL/EGL/VDPAU
 * stand-ins): beside the executable's directory (build/cubind), or one level
 * up for a build in a subdirectory (build/asan/cubind). */
static void interop_path(char *interop, size_t cap)
{
    source_path("runtime/interop", interop, cap);
    if (!is_directory(interop))
        source_path("../runtime/interop", interop, cap);
}

/* A library's header with its bind-header files (runtime/interop on the
 * include path, for the runtime's interop headers); cuda.h with the
 * interop headers beside it, read with the shim headers of runtime/interop.
 * NULL after reporting the error; *status is then the exit status (2: the
 * header was refused as not a driver header, 1: any other failure). */
static cb_model *load_model(const char *header, int library, const char *const *bind_headers,
                            const char *include, int *status)
{
    char err[2048], interop[PATH_MAX];
    interop_path(interop, sizeof interop);
    int refused;
    cb_model *m = model_parse_api_in(header, library, interop, bind_headers, include, err,
                                     sizeof err, &refused);
    if (!m) {
        fprintf(stderr, "%s\n", err);
        *status = refused ? 2 : 1;
    }
    return m;
}

/* Every binding returns the result enum the rules file names (`result`:
 * CUresult, nvrtcResult ...), so a header without that enum is refused
 * as the parser refuses a header that is not a driver header: -1 with
 * "file:line: message" in err, for exit status 2. The line is that of the
 * first function returning the type (declared, but not as an enum), else
 * 0: the file as a whole. */
static int check_result_enum(const cb_model *m, const cb_api *api, const char *rules_path,
                             char *err, size_t errlen)
{
    if (model_enum(m, api->result))
        return 0;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        if (f->ret && f->ret->name && strcmp(f->ret->name, api->result) == 0) {
            snprintf(err, errlen,
                     "%s:%u: no enum %s (the result enum the rules file %s names; the return "
                     "type of %s, declared here)",
                     f->file, f->line, api->result, rules_path, f->name);
            return -1;
        }
    }
    snprintf(err, errlen, "%s:0: no enum %s (the result enum the rules file %s names)",
             m->header, api->result, rules_path);
    return -1;
}

/* The result a C API entry point returns with a Python exception set (the
 * capi-sentinel rule; CUDA_ERROR_NOT_FOUND by default) must be a member of
 * the result enum, or the generated entry points would return another
 * enum's value: a rules file of a library without the rule is refused
 * here, naming it, before anything is written. 0, or -1 with err set. */
static int check_capi_sentinel(const cb_model *m, const cb_api *api, const char *rules_path,
                               char *err, size_t errlen)
{
    const cb_enum *e = model_enum(m, api->result);
    for (size_t i = 0; e && i < e->nitems; i++)
        if (strcmp(e->items[i].name, api->capi_sentinel) == 0)
            return 0;
    snprintf(err, errlen,
             "%s: the C API's error result %s is no member of %s, the result enum (a "
             "`capi-sentinel VALUE` rule names the member its entry points return with an "
             "exception set)",
             rules_path, api->capi_sentinel, api->result);
    return -1;
}

static int cmd_dump(int argc, char **argv)
{
    options o = {0};
    if (parse_options(argc, argv, &o, usage_dump) < 0)
        return 2;
    if (o.help)
        return 0;
    if (!o.header) {
        fprintf(stderr, "cubind dump: --header is required\n%s", usage_dump);
        return 2;
    }
    int status;
    cb_model *m;
    if (o.rules) {
        char err[2048];
        cb_rules *rules = rules_load(o.rules, err, sizeof err);
        if (!rules) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        cb_api api;
        rules_api(rules, &api);
        m = load_model(o.header, api.is_library, api.bind_headers, o.include, &status);
        rules_free(rules);
    } else {
        m = load_model(o.header, model_is_library_header(o.header), NULL, o.include, &status);
    }
    if (!m)
        return status;
    int rc = dump_model(stdout, m);
    model_free(m);
    if (rc < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "cubind dump: cannot write to stdout\n");
        return 1;
    }
    return 0;
}

/* "out/driver.c: input input ..." for every input of the generation, so
 * the build reruns it when a template is added, changed or removed. */
static int write_depfile(const char *path, const char *outdir, const char *first_output,
                         const cb_model *m, const tmpl_set *ts, const char *rules)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "%s/%s:", outdir, first_output);
    fprintf(f, " \\\n  %s \\\n  %s", m->header, rules);
    if (*m->typedefs_header)
        fprintf(f, " \\\n  %s", m->typedefs_header);
    /* the shim in its directory, the interop headers beside cuda.h */
    const char *slash = strrchr(m->header, '/');
    int dirlen = slash ? (int)(slash - m->header + 1) : 0;
    for (size_t i = 0; i < m->ninterop_includes; i++) {
        const char *h = m->interop_includes[i];
        if (strcmp(h, "cubind_interop.h") == 0)
            fprintf(f, " \\\n  %s/%s", m->interop_dir, h);
        else if (strcmp(h, "cudaTypedefs.h") != 0) /* listed above */
            fprintf(f, " \\\n  %.*s%s", dirlen, m->header, h);
    }
    for (size_t i = 0; i < tmpl_count(ts); i++)
        fprintf(f, " \\\n  %s", tmpl_origin(ts, i));
    fputc('\n', f);
    return fclose(f) == 0 ? 0 : -1;
}

static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* What generate and classify both compute from a header and a rules file:
 * the rules, the model, the rules bound to it, the classification. Every
 * member is NULL until its step succeeded; classified_free frees what is
 * set. */
typedef struct {
    cb_rules *rules;
    cb_model *m;
    cb_facts *facts;
    cb_classes *classes;
} classified;

/* Reads rules_path, parses header for the API it names, checks the result
 * enum, binds the rules (refusing one that does not fit what it names:
 * rules_bind.h) and classifies. 0, or the exit status (1, or 2 for a
 * refused header) with the message in err, or with err empty when it was
 * already reported. keep_docs: the header's
 * documentation comments stay in the model (generate --header-docs). */
static int classify_header(classified *c, const char *header, const char *rules_path,
                           const char *include, int keep_docs, char *err, size_t errlen)
{
    *err = '\0';
    if (!(c->rules = rules_load(rules_path, err, errlen)))
        return 1;
    cb_api api;
    rules_api(c->rules, &api);
    int status;
    if (!(c->m = load_model(header, api.is_library, api.bind_headers, include, &status)))
        return status;
    if (check_result_enum(c->m, &api, rules_path, err, errlen) < 0)
        return 2;
    if (check_capi_sentinel(c->m, &api, rules_path, err, errlen) < 0)
        return 1;
    if (!keep_docs)
        model_forget_docs(c->m);
    if (define_enums(c->rules, &api, c->m, err, errlen) < 0)
        return 1;
    c->facts = rules_bind(c->rules, c->m);
    if (c->facts->error) {
        snprintf(err, errlen, "%s", c->facts->error);
        return 1;
    }
    c->classes = classify_model(c->m, c->facts);
    if (classify_undo(c->m, c->classes, c->facts, err, errlen) < 0)
        return 1;
    if (classify_count_bounds(c->m, c->classes, c->facts, err, errlen) < 0)
        return 1;
    return 0;
}

static void classified_free(classified *c)
{
    classes_free(c->classes);
    rules_unbind(c->facts);
    model_free(c->m);
    rules_free(c->rules);
}

static int cmd_generate(int argc, char **argv)
{
    options o = {0};
    if (parse_options(argc, argv, &o, usage_generate) < 0)
        return 2;
    if (o.help)
        return 0;
    if (!o.header || !o.out) {
        fprintf(stderr, "cubind generate: --header and --out are required\n%s", usage_generate);
        return 2;
    }
    if (!is_directory(o.out)) {
        fprintf(stderr, "%s:0: output directory does not exist\n", o.out);
        return 1;
    }
    char tdir[PATH_MAX], rfile[PATH_MAX], err[2048];
    if (!o.templates) {
        source_path("templates", tdir, sizeof tdir);
        o.templates = tdir;
    }
    if (!o.rules) {
        source_path("gen/rules.txt", rfile, sizeof rfile);
        o.rules = rfile;
    }
    int status = 1;
    classified c = {0};
    render_output out = {0};
    tmpl_set *ts = tmpl_set_new();
    if (!ts) {
        fputs("cubind: out of memory\n", stderr);
        return 1;
    }
    if (tmpl_load_dir(ts, o.templates, err, sizeof err) < 0)
        goto report;
    if ((status = classify_header(&c, o.header, o.rules, o.include, o.header_docs, err, sizeof err)) != 0)
        goto report;
    status = 1;
    if (render_all(&out, ts, c.m, c.classes, c.rules, err, sizeof err) < 0)
        goto report;
    if (render_write(&out, o.out, err, sizeof err) < 0)
        goto report;
    if (o.depfile && write_depfile(o.depfile, o.out, out.files[0].name, c.m, ts, o.rules) < 0) {
        snprintf(err, sizeof err, "%s:0: cannot write the dependency file", o.depfile);
        goto report;
    }
    size_t unmatched = rules_unmatched(c.facts, o.list_unmatched ? stderr : NULL);
    if (unmatched && !o.list_unmatched)
        fprintf(stderr,
                "cubind: %zu rule%s of %s name%s nothing in %s (rules for other releases; "
                "--list-unmatched lists them)\n",
                unmatched, unmatched == 1 ? "" : "s", o.rules, unmatched == 1 ? "s" : "", o.header);
    const char *report = "unsupported.txt";
    for (size_t i = 0; i < out.nfiles; i++)
        if (strstr(out.files[i].name, "unsupported.txt"))
            report = out.files[i].name;
    fprintf(stderr, "cubind: %zu of %zu functions bound; the rest are listed in %s/%s\n",
            c.classes->nsupported, c.classes->nfunctions, o.out, report);
    status = 0;
    goto done;
report:
    if (*err)
        fprintf(stderr, "%s\n", err);
done:
    render_output_free(&out);
    classified_free(&c);
    tmpl_set_free(ts);
    return status;
}

static int cmd_classify(int argc, char **argv)
{
    options o = {0};
    if (parse_options(argc, argv, &o, usage_classify) < 0)
        return 2;
    if (o.help)
        return 0;
    if (!o.header || o.out || o.templates || o.depfile) {
        fprintf(stderr, "cubind classify: %s\n%s",
                o.header ? "takes only --header and --rules" : "--header is required",
                usage_classify);
        return 2;
    }
    char rfile[PATH_MAX], err[2048];
    if (!o.rules) {
        source_path("gen/rules.txt", rfile, sizeof rfile);
        o.rules = rfile;
    }
    classified c = {0};
    int status = classify_header(&c, o.header, o.rules, o.include, 1, err, sizeof err);
    if (status == 0 && (classify_json(stdout, c.m, c.classes) < 0 || fflush(stdout) != 0)) {
        snprintf(err, sizeof err, "cubind classify: cannot write to stdout");
        status = 1;
    }
    if (status != 0 && *err)
        fprintf(stderr, "%s\n", err);
    classified_free(&c);
    return status;
}

static int cmd_verify(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[2], "--help") == 0) {
        fputs(usage_verify, argc < 3 ? stderr : stdout);
        return argc < 3 ? 2 : 0;
    }
    int bad = 0;
    for (int i = 2; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "%s:0: cannot open\n", argv[i]);
            bad = 1;
            continue;
        }
        strbuf sb = {0};
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            sb_append(&sb, buf, n);
        fclose(f);
        const char *why = "";
        int ok = sb.oom ? 0 : checksum_verify(sb.data ? sb.data : "", sb.len, &why);
        if (ok != 1) {
            fprintf(stderr, "%s:1: %s\n", argv[i], sb.oom ? "out of memory" : why);
            bad = 1;
        }
        sb_free(&sb);
    }
    return bad;
}

static int cmd_rules(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[2], "--help") != 0 && strcmp(argv[2], "-h") != 0) {
        fprintf(stderr, "cubind: %s: unknown option\n%s", argv[2], usage_rules);
        return 2;
    }
    fputs(usage_rules, stdout);
    fputc('\n', stdout);
    rules_print_directives(stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("cubind %s\n", CUBIND_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "generate") == 0)
        return cmd_generate(argc, argv);
    if (strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc, argv);
    if (strcmp(argv[1], "classify") == 0)
        return cmd_classify(argc, argv);
    if (strcmp(argv[1], "verify") == 0)
        return cmd_verify(argc, argv);
    if (strcmp(argv[1], "rules") == 0)
        return cmd_rules(argc, argv);
    if (strcmp(argv[1], "manifest") == 0) {
        char interop[PATH_MAX];
        interop_path(interop, sizeof interop);
        return abi_cmd_manifest(argc, argv, interop);
    }
    if (strcmp(argv[1], "abi-diff") == 0)
        return abi_cmd_diff(argc, argv);
    if (strcmp(argv[1], "abi-check") == 0)
        return abi_cmd_check(argc, argv);
    fprintf(stderr, "cubind: unknown command '%s'\n%s", argv[1], usage_main);
    return 2;
}
