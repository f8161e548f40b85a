/* The official JSON Schema test suite (tests/vectors/json-schema, a copy of
 * json-schema-org's): every required test of draft2020-12 and draft7 must
 * pass; the optional ones are counted and listed per file. The remote
 * documents are registered under their http://localhost:1234/ URIs through
 * the registry, never fetched. Files in optional/format run with format
 * assertion on, as the suite's README asks. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "testutil.h"

#define SUITE AW_SOURCE_DIR "/tests/vectors/json-schema"

typedef struct tally {
    size_t passed, failed;
} tally;

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The .json files (or, with dirs, the sub-directories) of a directory,
 * sorted. */
static size_t list_dir(const char *dir, int dirs, char ***out) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0, cap = 64;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        if (dirs ? !S_ISDIR(st.st_mode) : (!S_ISREG(st.st_mode) || !strstr(e->d_name, ".json"))) continue;
        if (n == cap) names = realloc(names, (cap *= 2) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    *out = names;
    return n;
}

static void free_list(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

static aw_json_doc *read_doc(const char *path) {
    size_t len;
    char *text = aw_test_read_file(path, &len);
    assert_non_null(text);
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_json_parse(text, len, NULL, &doc, &err)) fail_msg("%s: %s", path, err.message);
    free(text);
    return doc;
}

/* Every file under remotes/, as http://localhost:1234/<path>. */
static void register_remotes(aw_schema_registry *reg, const char *dir, const char *rel) {
    char **files, **dirs;
    size_t nf = list_dir(dir, 0, &files), nd = list_dir(dir, 1, &dirs);
    for (size_t i = 0; i < nf; i++) {
        char path[1024], uri[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        snprintf(uri, sizeof uri, "http://localhost:1234/%s%s", rel, files[i]);
        aw_json_doc *doc = read_doc(path);
        aw_error err;
        assert_int_equal(aw_schema_registry_add(reg, uri, aw_json_doc_root(doc), &err), 0);
        aw_json_doc_free(doc);
    }
    for (size_t i = 0; i < nd; i++) {
        char path[1024], sub[1024];
        snprintf(path, sizeof path, "%s/%s", dir, dirs[i]);
        snprintf(sub, sizeof sub, "%s%s/", rel, dirs[i]);
        register_remotes(reg, path, sub);
    }
    free_list(files, nf);
    free_list(dirs, nd);
}

/* Run one file; failures are printed (for optional files only with
 * AW_SCHEMA_SUITE_VERBOSE set). */
static void run_file(const char *path, const char *shown, aw_schema_draft draft, int format_assert,
                     const aw_schema_registry *reg, tally *t, int required) {
    aw_json_doc *doc = read_doc(path);
    const aw_json_value *cases = aw_json_doc_root(doc);
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    for (size_t c = 0; c < aw_json_count(cases); c++) {
        const aw_json_value *tc = aw_json_at(cases, c);
        const aw_json_value *tests = aw_json_get(tc, "tests");
        const aw_json_value *desc = aw_json_get(tc, "description");
        aw_schema_options opts = {NULL, draft, format_assert != 0, reg, NULL};
        aw_schema *s = NULL;
        aw_error err;
        int rc = aw_schema_compile(aw_json_get(tc, "schema"), &opts, &s, &err);
        for (size_t k = 0; k < aw_json_count(tests); k++) {
            const aw_json_value *test = aw_json_at(tests, k);
            const aw_json_value *want = aw_json_get(test, "valid");
            int ok;
            const char *why = "";
            if (rc) {
                ok = 0;
                why = err.message;
            } else {
                aw_error verr;
                /* every test twice: with errors collected and for the verdict only */
                /* every test three ways: errors collected; the verdict only
                 * (the fast pass); the verdict by the frame machine alone (a
                 * max_depth below 64 turns the fast pass off) */
                aw_schema_validate_options full = {20, 0}, quick = {0, 0}, frames = {0, 63};
                int v1 = aw_schema_validate(s, aw_json_get(test, "data"), &full, &r, &verr);
                int valid1 = r.valid;
                size_t nerr = r.error_count;
                int v3 = aw_schema_validate(s, aw_json_get(test, "data"), &frames, &r, &verr);
                int valid3 = r.valid;
                int v2 = aw_schema_validate(s, aw_json_get(test, "data"), &quick, &r, &verr);
                ok = v1 == 0 && v2 == 0 && v3 == 0 && valid1 == want->u.b && r.valid == want->u.b && valid3 == want->u.b;
                /* an invalid verdict comes with at least one error, a valid one with none */
                if (ok && valid1 != (nerr == 0)) {
                    ok = 0;
                    why = "errors do not match the verdict";
                }
                if (v1 || v2 || v3) why = verr.message;
            }
            if (ok) {
                t->passed++;
            } else {
                t->failed++;
                if (required || getenv("AW_SCHEMA_SUITE_VERBOSE"))
                    printf("%s %s: %s / %s (expected %s) %s\n", required ? "FAIL" : "optional-fail", shown, desc->u.str.ptr,
                           aw_json_get(test, "description")->u.str.ptr, want->u.b ? "valid" : "invalid", why);
            }
        }
        aw_schema_free(s);
    }
    aw_schema_result_free(&r);
    aw_json_doc_free(doc);
}

static aw_schema_registry *remotes(void) {
    aw_schema_registry *reg = aw_schema_registry_new(NULL);
    assert_non_null(reg);
    register_remotes(reg, SUITE "/remotes", "");
    return reg;
}

static void run_draft(const char *name, aw_schema_draft draft) {
    aw_schema_registry *reg = remotes();
    char dir[512];
    snprintf(dir, sizeof dir, SUITE "/tests/%s", name);
    char **files;
    size_t n = list_dir(dir, 0, &files);
    assert_true(n > 30);
    tally req = {0, 0};
    for (size_t i = 0; i < n; i++) {
        char path[1024], shown[256];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        snprintf(shown, sizeof shown, "%s/%s", name, files[i]);
        run_file(path, shown, draft, 0, reg, &req, 1);
    }
    free_list(files, n);
    printf("%s required: %zu passed, %zu failed\n", name, req.passed, req.failed);

    /* optional: counted, listed */
    tally opt_all = {0, 0};
    static const char *const subdirs[] = {"optional", "optional/format"};
    for (int d = 0; d < 2; d++) {
        snprintf(dir, sizeof dir, SUITE "/tests/%s/%s", name, subdirs[d]);
        n = list_dir(dir, 0, &files);
        for (size_t i = 0; i < n; i++) {
            char path[1024], shown[256];
            snprintf(path, sizeof path, "%s/%s", dir, files[i]);
            snprintf(shown, sizeof shown, "%s/%s/%s", name, subdirs[d], files[i]);
            tally t = {0, 0};
            run_file(path, shown, draft, d == 1, reg, &t, 0);
            printf("  optional %-55s %3zu/%zu\n", shown, t.passed, t.passed + t.failed);
            opt_all.passed += t.passed;
            opt_all.failed += t.failed;
        }
        free_list(files, n);
    }
    printf("%s optional: %zu of %zu pass\n", name, opt_all.passed, opt_all.passed + opt_all.failed);
    aw_schema_registry_free(reg);
    assert_int_equal(req.failed, 0);
    /* the required files hold hundreds of tests: a runner that ran none would pass */
    assert_true(req.passed > 800);
}

static void draft2020_12(void **state) {
    (void)state;
    run_draft("draft2020-12", AW_SCHEMA_DRAFT_2020_12);
}

static void draft7(void **state) {
    (void)state;
    run_draft("draft7", AW_SCHEMA_DRAFT_7);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(draft2020_12),
        cmocka_unit_test(draft7),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
