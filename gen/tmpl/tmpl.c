/* SPDX-License-Identifier: Apache-2.0 */
/* tmpl: cubind's template engine (language and API in tmpl.h). */
#define _POSIX_C_SOURCE 200809L

#include "tmpl/tmpl.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- values ------------------------------------------------------------ */

enum { TV_STR, TV_INT, TV_BOOL, TV_LIST, TV_MAP };

typedef struct {
    char *key;
    size_t klen;
    tv *val;
} tv_ent;

/* kind selects the union member.  STR: s holds n bytes plus a NUL.
   LIST: items[0..n), capacity cap, no NULL items.  MAP: ents[0..n) in
   insertion order, keys unique, capacity cap.  bad: a push or set into this
   container was lost (allocation failure or misuse); rendering refuses to
   read a bad container. */
struct tv {
    unsigned char kind, bad;
    size_t n, cap;
    union {
        char *s;
        long long i;
        int b;
        tv **items;
        tv_ent *ents;
    } u;
};

static const char *const tv_kind_name[] = {"string", "int", "bool", "list",
                                           "map"};

static tv *tv_new(int kind) {
    tv *v = calloc(1, sizeof *v);
    if (v)
        v->kind = (unsigned char)kind;
    return v;
}

tv *tv_str(const char *s) {
    size_t n;
    tv *v;
    if (!s)
        return NULL;
    n = strlen(s);
    v = tv_new(TV_STR);
    if (!v)
        return NULL;
    v->u.s = malloc(n + 1);
    if (!v->u.s) {
        free(v);
        return NULL;
    }
    memcpy(v->u.s, s, n + 1);
    v->n = n;
    return v;
}

static tv *tv_vstrf(const char *fmt, va_list ap) {
    strbuf sb;
    tv *v;
    sb_init(&sb);
    if (sb_vprintf(&sb, fmt, ap) != 0 || !(v = tv_new(TV_STR))) {
        sb_free(&sb);
        return NULL;
    }
    v->u.s = sb.data; /* sb_vprintf always allocates, even for "" */
    v->n = sb.len;
    return v;
}

tv *tv_strf(const char *fmt, ...) {
    va_list ap;
    tv *v;
    va_start(ap, fmt);
    v = tv_vstrf(fmt, ap);
    va_end(ap);
    return v;
}

tv *tv_int(long long i) {
    tv *v = tv_new(TV_INT);
    if (v)
        v->u.i = i;
    return v;
}

tv *tv_bool(int b) {
    tv *v = tv_new(TV_BOOL);
    if (v)
        v->u.b = b != 0;
    return v;
}

tv *tv_list(void) { return tv_new(TV_LIST); }
tv *tv_map(void) { return tv_new(TV_MAP); }

void tv_free(tv *v) {
    size_t i;
    if (!v)
        return;
    switch (v->kind) {
    case TV_STR:
        free(v->u.s);
        break;
    case TV_LIST:
        for (i = 0; i < v->n; i++)
            tv_free(v->u.items[i]);
        free(v->u.items);
        break;
    case TV_MAP:
        for (i = 0; i < v->n; i++) {
            free(v->u.ents[i].key);
            tv_free(v->u.ents[i].val);
        }
        free(v->u.ents);
        break;
    default:
        break;
    }
    free(v);
}

/* Returns arr with room for element n (of `size` bytes), reallocated and
   *cap updated when n == *cap; NULL when that fails (arr is then intact). */
static void *grow_arr(void *arr, size_t *cap, size_t n, size_t size) {
    size_t nc;
    void *p;
    if (n < *cap)
        return arr;
    nc = *cap ? *cap * 2 : 8;
    if (nc > (size_t)-1 / size)
        return NULL;
    p = realloc(arr, nc * size);
    if (p)
        *cap = nc;
    return p;
}

void tv_push(tv *list, tv *item) {
    tv **items;
    if (!list) {
        tv_free(item);
        return;
    }
    if (list->kind != TV_LIST || !item ||
        !(items = grow_arr(list->u.items, &list->cap, list->n, sizeof *items))) {
        list->bad = 1;
        tv_free(item);
        return;
    }
    list->u.items = items;
    items[list->n++] = item;
}

static tv_ent *tv_find(const tv *map, const char *key, size_t klen) {
    size_t i;
    for (i = 0; i < map->n; i++) {
        tv_ent *e = &map->u.ents[i];
        if (e->klen == klen && memcmp(e->key, key, klen) == 0)
            return e;
    }
    return NULL;
}

void tv_set(tv *map, const char *key, tv *val) {
    size_t klen;
    tv_ent *e, *ents;
    char *k;
    if (!map) {
        tv_free(val);
        return;
    }
    if (map->kind != TV_MAP || !key || !val)
        goto fail;
    klen = strlen(key);
    e = tv_find(map, key, klen);
    if (e) {
        tv_free(e->val);
        e->val = val;
        return;
    }
    ents = grow_arr(map->u.ents, &map->cap, map->n, sizeof *ents);
    if (!ents)
        goto fail;
    map->u.ents = ents;
    k = malloc(klen + 1);
    if (!k)
        goto fail;
    memcpy(k, key, klen + 1);
    e = &map->u.ents[map->n++];
    e->key = k;
    e->klen = klen;
    e->val = val;
    return;
fail:
    map->bad = 1;
    tv_free(val);
}

void tv_set_str(tv *map, const char *key, const char *s) {
    tv_set(map, key, tv_str(s));
}

void tv_set_strf(tv *map, const char *key, const char *fmt, ...) {
    va_list ap;
    tv *v;
    va_start(ap, fmt);
    v = tv_vstrf(fmt, ap);
    va_end(ap);
    tv_set(map, key, v);
}

void tv_set_int(tv *map, const char *key, long long v) {
    tv_set(map, key, tv_int(v));
}

void tv_set_bool(tv *map, const char *key, int b) {
    tv_set(map, key, tv_bool(b));
}

size_t tv_len(const tv *list) {
    return list && list->kind == TV_LIST ? list->n : 0;
}

/* ---- parsed templates ---------------------------------------------------- */

enum { N_TEXT, N_VAR, N_SECTION, N_INVERTED, N_PARTIAL };

typedef struct node node;
typedef struct {
    node *a;
    size_t n, cap;
} nvec;

/* One parsed piece of a template.  s[0..len) points into the owning
   template's text: for N_TEXT the bytes to copy (standalone lines already
   cut out), otherwise the tag's trimmed name.  kids is the body of
   N_SECTION / N_INVERTED (empty for other kinds).  ind[0..indlen) is the
   indentation of a standalone N_PARTIAL (indlen 0 otherwise); standalone
   says whether an N_PARTIAL's tag stood alone on its line, dynamic whether
   s names the value holding the partial's name ({{>*name}}) rather than the
   partial itself.  line is the 1-based line of the tag's "{{" (of the
   text's first byte for N_TEXT). */
struct node {
    int kind;
    int line;
    const char *s;
    size_t len;
    const char *ind;
    size_t indlen;
    int standalone, dynamic;
    nvec kids;
};

/* A template owns its name, origin and a private copy of its text; the
   tree root refers into text. */
typedef struct {
    char *name, *origin, *text;
    size_t namelen, len;
    nvec root;
} tmpl;

/* Templates in insertion order; names are unique. */
struct tmpl_set {
    tmpl **t;
    size_t n, cap;
};

static void nvec_free(nvec *v) {
    size_t i;
    for (i = 0; i < v->n; i++)
        nvec_free(&v->a[i].kids);
    free(v->a);
    v->a = NULL;
    v->n = v->cap = 0;
}

static int nvec_push(nvec *v, const node *nd) {
    node *a = grow_arr(v->a, &v->cap, v->n, sizeof *a);
    if (!a)
        return -1;
    v->a = a;
    v->a[v->n++] = *nd;
    return 0;
}

/* Writes "prefix: message" into err; prefix is "origin:line" or "origin"
   when line is 0. */
static void set_err(char *err, size_t errlen, const char *origin, int line,
                    const char *fmt, ...) TV_PRINTF(5, 6);
static void set_err(char *err, size_t errlen, const char *origin, int line,
                    const char *fmt, ...) {
    va_list ap;
    int n;
    if (!err || !errlen)
        return;
    if (line > 0)
        n = snprintf(err, errlen, "%s:%d: ", origin, line);
    else
        n = snprintf(err, errlen, "%s: ", origin);
    if (n < 0 || (size_t)n >= errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

/* Length to print for a name with "%.*s". */
static int plen(size_t n) { return n > 200 ? 200 : (int)n; }

static int is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
           c == '\f';
}

/* NULL if s[0..n) is a valid name (partial: a template name), else why. */
static const char *check_name(const char *s, size_t n, int partial) {
    size_t i, c;
    if (n == 0)
        return "empty name in tag";
    for (i = 0; i < n; i++)
        if (is_ws(s[i]) || s[i] == '{' || s[i] == '}' || s[i] == '\0')
            return "invalid name";
    if (partial || (n == 1 && s[0] == '.'))
        return NULL;
    if (s[0] == '.' || s[n - 1] == '.')
        return "invalid name";
    for (i = 1; i < n; i++)
        if (s[i] == '.' && s[i - 1] == '.')
            return "invalid name";
    if (s[0] == '@') {
        for (c = 0; c < n && s[c] != '.'; c++)
            ;
        if (!((c == 6 && memcmp(s, "@index", 6) == 0) ||
              (c == 6 && memcmp(s, "@first", 6) == 0) ||
              (c == 5 && memcmp(s, "@last", 5) == 0)))
            return "unknown special name (only @index, @first, @last)";
    }
    return NULL;
}

/* Position of the first "{{" or "}}" (open selects) at or after i, or len. */
static size_t find2(const char *s, size_t len, size_t i, char ch) {
    while (i + 1 < len) {
        const char *p = memchr(s + i, ch, len - i - 1);
        if (!p)
            return len;
        i = (size_t)(p - s);
        if (s[i + 1] == ch)
            return i;
        i++;
    }
    return len;
}

/* An open section while parsing: hdr describes the tag, kids its body so
   far.  Level 0 of the stack is the template's top level. */
typedef struct {
    node hdr;
    nvec kids;
} opensec;

static int parse(tmpl *t, char *err, size_t errlen) {
    const char *s = t->text;
    size_t len = t->len;
    opensec stack[TMPL_MAX_NEST + 1];
    size_t depth = 0, i = 0, text_start = 0, lp = 0, k;
    int line = 1, text_line = 1;

    memset(&stack[0], 0, sizeof stack[0]);
    for (;;) {
        size_t open = find2(s, len, i, '{'), close, b = 0, e = 0, end, ls = 0;
        size_t le, next = len;
        size_t text_end;
        int standalone = 0, dynamic = 0;
        char sigil = 0;
        node nd;

        for (; lp < open; lp++)
            if (s[lp] == '\n')
                line++;
        if (open == len) {
            text_end = len;
        } else {
            close = find2(s, len, open + 2, '}');
            if (close == len) {
                set_err(err, errlen, t->origin, line,
                        "unterminated tag: '{{' without '}}'");
                goto fail;
            }
            b = open + 2;
            e = close;
            end = close + 2;
            while (b < e && is_ws(s[b]))
                b++;
            if (b < e && (s[b] == '#' || s[b] == '^' || s[b] == '/' ||
                          s[b] == '>' || s[b] == '!'))
                sigil = s[b++];
            if (sigil != '!') {
                const char *why;
                while (b < e && is_ws(s[b]))
                    b++;
                if (sigil == '>' && b < e && s[b] == '*') {
                    dynamic = 1; /* {{>*name}}: a value names the partial */
                    b++;
                }
                while (e > b && is_ws(s[e - 1]))
                    e--;
                why = check_name(s + b, e - b, sigil == '>' && !dynamic);
                if (why) {
                    set_err(err, errlen, t->origin, line, "%s '%.*s'", why,
                            plen(close - open - 2), s + open + 2);
                    goto fail;
                }
            }
            /* Standalone: only blanks between the line start and "{{",
               and between "}}" and the line end. */
            next = end;
            if (sigil) {
                ls = open;
                while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t'))
                    ls--;
                le = end;
                while (le < len && (s[le] == ' ' || s[le] == '\t'))
                    le++;
                if (ls == 0 || s[ls - 1] == '\n') {
                    if (le == len) {
                        standalone = 1;
                        next = le;
                    } else if (s[le] == '\n') {
                        standalone = 1;
                        next = le + 1;
                    } else if (s[le] == '\r' && le + 1 < len &&
                               s[le + 1] == '\n') {
                        standalone = 1;
                        next = le + 2;
                    }
                }
            }
            text_end = standalone ? ls : open;
        }

        if (text_end > text_start) {
            memset(&nd, 0, sizeof nd);
            nd.kind = N_TEXT;
            nd.line = text_line;
            nd.s = s + text_start;
            nd.len = text_end - text_start;
            if (nvec_push(&stack[depth].kids, &nd) != 0)
                goto oom;
        }
        if (open == len)
            break;

        memset(&nd, 0, sizeof nd);
        nd.line = line;
        nd.s = s + b;
        nd.len = e - b;
        switch (sigil) {
        case '!':
            break;
        case '#':
        case '^':
            if (depth == TMPL_MAX_NEST) {
                set_err(err, errlen, t->origin, line,
                        "sections nested deeper than %d", TMPL_MAX_NEST);
                goto fail;
            }
            nd.kind = sigil == '#' ? N_SECTION : N_INVERTED;
            depth++;
            stack[depth].hdr = nd;
            memset(&stack[depth].kids, 0, sizeof(nvec));
            break;
        case '/': {
            node *h = &stack[depth].hdr;
            if (depth == 0) {
                set_err(err, errlen, t->origin, line,
                        "close tag '{{/%.*s}}' without an open section",
                        plen(nd.len), nd.s);
                goto fail;
            }
            if (h->len != nd.len || memcmp(h->s, nd.s, nd.len) != 0) {
                set_err(err, errlen, t->origin, line,
                        "mismatched close tag '{{/%.*s}}': '{{%c%.*s}}' "
                        "opened at line %d is still open",
                        plen(nd.len), nd.s, h->kind == N_SECTION ? '#' : '^',
                        plen(h->len), h->s, h->line);
                goto fail;
            }
            h->kids = stack[depth].kids;
            depth--;
            if (nvec_push(&stack[depth].kids, h) != 0) {
                depth++; /* the body is still owned by stack[depth + 1] */
                goto oom;
            }
            break;
        }
        case '>':
            nd.kind = N_PARTIAL;
            nd.standalone = standalone;
            nd.dynamic = dynamic;
            if (standalone) {
                nd.ind = s + ls;
                nd.indlen = open - ls;
            }
            if (nvec_push(&stack[depth].kids, &nd) != 0)
                goto oom;
            break;
        default:
            nd.kind = N_VAR;
            if (nvec_push(&stack[depth].kids, &nd) != 0)
                goto oom;
            break;
        }
        i = text_start = next;
        for (; lp < next; lp++)
            if (s[lp] == '\n')
                line++;
        text_line = line;
    }
    if (depth > 0) {
        node *h = &stack[depth].hdr;
        set_err(err, errlen, t->origin, h->line,
                "unclosed section '{{%c%.*s}}'", h->kind == N_SECTION ? '#' : '^',
                plen(h->len), h->s);
        goto fail;
    }
    t->root = stack[0].kids;
    return 0;
oom:
    set_err(err, errlen, t->origin, 0, "out of memory");
fail:
    for (k = 0; k <= depth; k++)
        nvec_free(&stack[k].kids);
    return -1;
}

static void tmpl_free1(tmpl *t) {
    if (!t)
        return;
    nvec_free(&t->root);
    free(t->name);
    free(t->origin);
    free(t->text);
    free(t);
}

tmpl_set *tmpl_set_new(void) { return calloc(1, sizeof(tmpl_set)); }

void tmpl_set_free(tmpl_set *ts) {
    size_t i;
    if (!ts)
        return;
    for (i = 0; i < ts->n; i++)
        tmpl_free1(ts->t[i]);
    free(ts->t);
    free(ts);
}

static const tmpl *find_tmpl(const tmpl_set *ts, const char *name, size_t n) {
    size_t i;
    for (i = 0; i < ts->n; i++)
        if (ts->t[i]->namelen == n && memcmp(ts->t[i]->name, name, n) == 0)
            return ts->t[i];
    return NULL;
}

size_t tmpl_count(const tmpl_set *ts) {
    return ts ? ts->n : 0;
}

const char *tmpl_origin(const tmpl_set *ts, size_t i) {
    return ts && i < ts->n ? ts->t[i]->origin : NULL;
}

int tmpl_has(const tmpl_set *ts, const char *name) {
    return ts && name && find_tmpl(ts, name, strlen(name)) != NULL;
}

static char *dupn(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

int tmpl_add(tmpl_set *ts, const char *name, const char *origin,
             const char *text, size_t len, char *err, size_t errlen) {
    tmpl *t, **arr;
    const tmpl *old;
    if (err && errlen)
        err[0] = '\0';
    if (!origin)
        origin = name ? name : "(template)";
    if (!ts || !name || (!text && len)) {
        set_err(err, errlen, origin, 0,
                ts ? "invalid arguments" : "out of memory (no template set)");
        return -1;
    }
    old = find_tmpl(ts, name, strlen(name));
    if (old) {
        set_err(err, errlen, origin, 0, "template '%s' already defined in %s",
                name, old->origin);
        return -1;
    }
    t = calloc(1, sizeof *t);
    if (!t || !(t->name = dupn(name, strlen(name))) ||
        !(t->origin = dupn(origin, strlen(origin))) ||
        !(t->text = dupn(text ? text : "", len)) ||
        !(arr = grow_arr(ts->t, &ts->cap, ts->n, sizeof *arr))) {
        tmpl_free1(t);
        set_err(err, errlen, origin, 0, "out of memory");
        return -1;
    }
    ts->t = arr;
    t->namelen = strlen(name);
    t->len = len;
    if (parse(t, err, errlen) != 0) {
        tmpl_free1(t);
        return -1;
    }
    ts->t[ts->n++] = t;
    return 0;
}

/* ---- loading a directory --------------------------------------------- */

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_file(const char *path, strbuf *sb) {
    char buf[65536];
    size_t n;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_append(sb, buf, n);
    n = (size_t)ferror(f);
    fclose(f);
    return n || sb->oom ? -1 : 0;
}

/* path holds dir + the relative path being visited; the relative part
   starts at path->data[rootlen + 1]. */
static int load_rec(tmpl_set *ts, strbuf *path, size_t rootlen, int depth,
                    char *err, size_t errlen) {
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    int rc = -1;

    d = opendir(path->data);
    if (!d) {
        set_err(err, errlen, path->data, 0, "cannot open directory: %s",
                strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        char *nm, **nn;
        if (de->d_name[0] == '.')
            continue;
        nn = grow_arr(names, &cap, n, sizeof *nn);
        if (nn)
            names = nn;
        nm = nn ? dupn(de->d_name, strlen(de->d_name)) : NULL;
        if (!nm) {
            closedir(d);
            set_err(err, errlen, path->data, 0, "out of memory");
            goto out;
        }
        names[n++] = nm;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(char *), cmp_str);

    for (i = 0; i < n; i++) {
        size_t save = path->len, nl = strlen(names[i]);
        struct stat st;
        sb_putc(path, '/');
        sb_puts(path, names[i]);
        if (path->oom) {
            set_err(err, errlen, names[i], 0, "out of memory");
            goto out;
        }
        if (stat(path->data, &st) != 0) {
            set_err(err, errlen, path->data, 0, "cannot stat: %s",
                    strerror(errno));
            goto out;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth >= 32) {
                set_err(err, errlen, path->data, 0,
                        "directories nested too deeply");
                goto out;
            }
            if (load_rec(ts, path, rootlen, depth + 1, err, errlen) != 0)
                goto out;
        } else if (S_ISREG(st.st_mode) && nl > 5 &&
                   strcmp(names[i] + nl - 5, ".tmpl") == 0) {
            strbuf text;
            char *tname;
            int r;
            sb_init(&text);
            if (read_file(path->data, &text) != 0) {
                set_err(err, errlen, path->data, 0, "cannot read: %s",
                        text.oom ? "out of memory" : strerror(errno));
                sb_free(&text);
                goto out;
            }
            tname = dupn(path->data + rootlen + 1, path->len - rootlen - 1 - 5);
            if (!tname) {
                sb_free(&text);
                set_err(err, errlen, path->data, 0, "out of memory");
                goto out;
            }
            r = tmpl_add(ts, tname, path->data, text.data, text.len, err,
                         errlen);
            free(tname);
            sb_free(&text);
            if (r != 0)
                goto out;
        }
        path->len = save;
        path->data[save] = '\0';
    }
    rc = 0;
out:
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int tmpl_load_dir(tmpl_set *ts, const char *dir, char *err, size_t errlen) {
    strbuf path;
    size_t n;
    int rc;
    if (err && errlen)
        err[0] = '\0';
    if (!ts || !dir) {
        set_err(err, errlen, dir ? dir : "(null)", 0,
                ts ? "invalid arguments" : "out of memory (no template set)");
        return -1;
    }
    n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    sb_init(&path);
    sb_append(&path, dir, n);
    if (path.oom) {
        set_err(err, errlen, dir, 0, "out of memory");
        return -1;
    }
    rc = load_rec(ts, &path, path.len, 0, err, errlen);
    sb_free(&path);
    return rc;
}

/* ---- rendering ------------------------------------------------------- */

/* A context frame.  v: the pushed value (never NULL).  iter: the frame is
   one item of a list section, idx of cnt, and answers @index/@first/@last. */
typedef struct {
    const tv *v;
    size_t idx, cnt;
    int iter;
} frame;

/* fr[0] is the root context; fr[nfr - 1] the innermost frame.  ind holds the
   accumulated indentation of the standalone partials being rendered; bol is
   set when the last byte written to out ended a line (or nothing was). */
typedef struct {
    const tmpl_set *ts;
    strbuf *out;
    char *err;
    size_t errlen;
    frame *fr;
    size_t nfr, capfr;
    strbuf ind;
    int bol;
    int depth;
} rstate;

/* A looked-up value: a tv (v, kind == v->kind), or a special name's
   synthesized int/bool in num (v NULL). */
typedef struct {
    int kind;
    const tv *v;
    long long num;
} rv;

#define OOM_CTX "out of memory: the context is incomplete (an allocation "  \
                "failed while building it, or tv_set/tv_push was given the " \
                "wrong kind of container)"

static void emit(rstate *st, const char *s, size_t n) {
    const char *nl;
    size_t k;
    if (!n)
        return;
    if (!st->ind.len) {
        sb_append(st->out, s, n);
        st->bol = s[n - 1] == '\n';
        return;
    }
    while (n) {
        if (st->bol && *s != '\n' && *s != '\r')
            sb_append(st->out, st->ind.data, st->ind.len);
        nl = memchr(s, '\n', n);
        k = nl ? (size_t)(nl - s) + 1 : n;
        sb_append(st->out, s, k);
        s += k;
        n -= k;
        st->bol = nl != NULL;
    }
}

/* An inline partial's output, from out[start], loses its final line
   ending ("\n" or "\r\n"): a template file ends with one, as editors
   write it, yet is included inside a line. */
static void drop_final_newline(rstate *st, size_t start) {
    strbuf *o = st->out;
    if (o->oom || o->len == start || o->data[o->len - 1] != '\n')
        return;
    o->len--;
    if (o->len > start && o->data[o->len - 1] == '\r')
        o->len--;
    o->data[o->len] = '\0';
    st->bol = o->len == 0 || o->data[o->len - 1] == '\n';
}

static int lookup(rstate *st, const tmpl *t, const node *nd, rv *out) {
    const char *s = nd->s, *p;
    size_t n = nd->len, c, f;
    const tv *cur = NULL;

    memset(out, 0, sizeof *out);
    if (n == 1 && s[0] == '.') {
        cur = st->fr[st->nfr - 1].v;
        if (cur->bad) {
            set_err(st->err, st->errlen, t->origin, nd->line, OOM_CTX);
            return -1;
        }
        out->kind = cur->kind;
        out->v = cur;
        return 0;
    }
    p = memchr(s, '.', n);
    c = p ? (size_t)(p - s) : n;
    f = st->nfr;
    if (s[0] == '@') {
        while (f > 0 && !st->fr[f - 1].iter)
            f--;
        if (f == 0) {
            set_err(st->err, st->errlen, t->origin, nd->line,
                    "'%.*s' used outside a list section", plen(n), s);
            return -1;
        }
        f--;
        if (s[1] == 'i') {
            out->kind = TV_INT;
            out->num = (long long)st->fr[f].idx;
        } else {
            out->kind = TV_BOOL;
            out->num = s[1] == 'f' ? st->fr[f].idx == 0
                                   : st->fr[f].idx + 1 == st->fr[f].cnt;
        }
    } else {
        tv_ent *e = NULL;
        while (f > 0) {
            const tv *v = st->fr[--f].v;
            if (v->kind != TV_MAP)
                continue;
            if (v->bad) {
                set_err(st->err, st->errlen, t->origin, nd->line, OOM_CTX);
                return -1;
            }
            if ((e = tv_find(v, s, c)) != NULL)
                break;
        }
        if (!e) {
            set_err(st->err, st->errlen, t->origin, nd->line,
                    "missing value '%.*s'", plen(n), s);
            return -1;
        }
        cur = e->val;
    }
    while (c < n) {
        size_t b = c + 1;
        tv_ent *e;
        if (!cur || cur->kind != TV_MAP) {
            set_err(st->err, st->errlen, t->origin, nd->line,
                    "'%.*s' is a %s, not a map, in '%.*s'", plen(c), s,
                    tv_kind_name[cur ? cur->kind : out->kind], plen(n), s);
            return -1;
        }
        if (cur->bad) {
            set_err(st->err, st->errlen, t->origin, nd->line, OOM_CTX);
            return -1;
        }
        p = memchr(s + b, '.', n - b);
        c = p ? (size_t)(p - s) : n;
        e = tv_find(cur, s + b, c - b);
        if (!e) {
            set_err(st->err, st->errlen, t->origin, nd->line,
                    "missing value '%.*s'", plen(n), s);
            return -1;
        }
        cur = e->val;
    }
    if (cur) {
        if (cur->bad) {
            set_err(st->err, st->errlen, t->origin, nd->line, OOM_CTX);
            return -1;
        }
        out->kind = cur->kind;
        out->v = cur;
    }
    return 0;
}

static int push_frame(rstate *st, const tmpl *t, int line, const tv *v,
                      size_t idx, size_t cnt, int iter) {
    frame *f = grow_arr(st->fr, &st->capfr, st->nfr, sizeof *f);
    if (!f) {
        set_err(st->err, st->errlen, t->origin, line, "out of memory");
        return -1;
    }
    st->fr = f;
    f = &st->fr[st->nfr++];
    f->v = v;
    f->idx = idx;
    f->cnt = cnt;
    f->iter = iter;
    return 0;
}

static int render_nodes(rstate *st, const tmpl *t, const node *a, size_t n);

static int render_body(rstate *st, const tmpl *t, const node *nd,
                       const tv *push, size_t idx, size_t cnt, int iter) {
    int r;
    if (!push)
        return render_nodes(st, t, nd->kids.a, nd->kids.n);
    if (push_frame(st, t, nd->line, push, idx, cnt, iter) != 0)
        return -1;
    r = render_nodes(st, t, nd->kids.a, nd->kids.n);
    st->nfr--;
    return r;
}

static int render_nodes(rstate *st, const tmpl *t, const node *a, size_t n) {
    size_t i, j;
    for (i = 0; i < n; i++) {
        const node *nd = &a[i];
        rv v;
        switch (nd->kind) {
        case N_TEXT:
            emit(st, nd->s, nd->len);
            break;
        case N_VAR:
            if (lookup(st, t, nd, &v) != 0)
                return -1;
            if (v.kind == TV_STR) {
                emit(st, v.v->u.s, v.v->n);
            } else if (v.kind == TV_INT) {
                char buf[32];
                int k = snprintf(buf, sizeof buf, "%lld",
                                 v.v ? v.v->u.i : v.num);
                emit(st, buf, (size_t)k);
            } else {
                set_err(st->err, st->errlen, t->origin, nd->line,
                        "'%.*s' is a %s, not a string or int", plen(nd->len),
                        nd->s, tv_kind_name[v.kind]);
                return -1;
            }
            break;
        case N_SECTION:
            if (lookup(st, t, nd, &v) != 0)
                return -1;
            if (v.kind == TV_LIST) {
                for (j = 0; j < v.v->n; j++)
                    if (render_body(st, t, nd, v.v->u.items[j], j, v.v->n, 1))
                        return -1;
            } else if (v.kind == TV_BOOL) {
                if ((v.v ? v.v->u.b : v.num) &&
                    render_body(st, t, nd, NULL, 0, 0, 0) != 0)
                    return -1;
            } else if (render_body(st, t, nd, v.v, 0, 0, 0) != 0) {
                return -1;
            }
            break;
        case N_INVERTED:
            if (lookup(st, t, nd, &v) != 0)
                return -1;
            if (((v.kind == TV_BOOL && !(v.v ? v.v->u.b : v.num)) ||
                 (v.kind == TV_LIST && v.v->n == 0)) &&
                render_body(st, t, nd, NULL, 0, 0, 0) != 0)
                return -1;
            break;
        case N_PARTIAL: {
            const char *name = nd->s;
            size_t namelen = nd->len, save = st->ind.len, start;
            const tmpl *p;
            int r;
            if (nd->dynamic) {
                if (lookup(st, t, nd, &v) != 0)
                    return -1;
                if (v.kind != TV_STR) {
                    set_err(st->err, st->errlen, t->origin, nd->line,
                            "'%.*s' is a %s, not a string naming a partial",
                            plen(nd->len), nd->s, tv_kind_name[v.kind]);
                    return -1;
                }
                name = v.v->u.s;
                namelen = v.v->n;
            }
            p = find_tmpl(st->ts, name, namelen);
            if (!p) {
                set_err(st->err, st->errlen, t->origin, nd->line,
                        "unknown partial '%.*s'", plen(namelen), name);
                return -1;
            }
            if (st->depth >= TMPL_MAX_DEPTH) {
                set_err(st->err, st->errlen, t->origin, nd->line,
                        "partials nested deeper than %d (recursive partial "
                        "'%.*s'?)",
                        TMPL_MAX_DEPTH, plen(namelen), name);
                return -1;
            }
            if (sb_append(&st->ind, nd->ind, nd->indlen) != 0) {
                set_err(st->err, st->errlen, t->origin, nd->line,
                        "out of memory");
                return -1;
            }
            st->depth++;
            start = st->out->len;
            r = render_nodes(st, p, p->root.a, p->root.n);
            st->depth--;
            st->ind.len = save;
            if (r == 0 && !nd->standalone)
                drop_final_newline(st, start);
            if (r != 0) {
                size_t l = st->err && st->errlen ? strlen(st->err) : 0;
                if (l + 1 < st->errlen)
                    snprintf(st->err + l, st->errlen - l,
                             " (included from %s:%d)", t->origin, nd->line);
                return -1;
            }
            break;
        }
        }
    }
    return 0;
}

int tmpl_render(const tmpl_set *ts, const char *name, const tv *ctx,
                strbuf *out, char *err, size_t errlen) {
    rstate st;
    const tmpl *t;
    int r;
    if (err && errlen)
        err[0] = '\0';
    if (!ts || !name || !out) {
        set_err(err, errlen, name ? name : "(null)", 0,
                ts ? "invalid arguments" : "out of memory (no template set)");
        return -1;
    }
    t = find_tmpl(ts, name, strlen(name));
    if (!t) {
        set_err(err, errlen, name, 0, "unknown template '%s'", name);
        return -1;
    }
    if (!ctx) {
        set_err(err, errlen, t->origin, 0, "out of memory: the context is NULL");
        return -1;
    }
    memset(&st, 0, sizeof st);
    st.ts = ts;
    st.out = out;
    st.err = err;
    st.errlen = errlen;
    st.bol = out->len == 0 || out->data[out->len - 1] == '\n';
    sb_init(&st.ind);
    r = push_frame(&st, t, 1, ctx, 0, 0, 0);
    if (r == 0)
        r = render_nodes(&st, t, t->root.a, t->root.n);
    if (r == 0 && out->oom) {
        set_err(err, errlen, t->origin, 0, "out of memory");
        r = -1;
    }
    free(st.fr);
    sb_free(&st.ind);
    return r;
}
