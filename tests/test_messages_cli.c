/* agentwire messages encode | toolcalls | detect, run as a user would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#define VEC AW_SOURCE_DIR "/tests/vectors/messages/"

typedef struct run {
    int status;
    char *out, *err;
    size_t out_len, err_len;
} run;

static run cli(const char *args, const char *input) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' messages %s", AW_CLI_PATH, args);
    run r;
    memset(&r, 0, sizeof r);
    r.status = aw_test_run_cmd(cmd, input, input ? strlen(input) : 0, &r.out, &r.out_len, &r.err, &r.err_len);
    assert_non_null(r.out);
    assert_non_null(r.err);
    return r;
}

static void run_free(run *r) {
    free(r->out);
    free(r->err);
}

static void expect_file(const char *args, const char *want_file) {
    run r = cli(args, NULL);
    size_t len;
    char *want = aw_test_read_file(want_file, &len);
    assert_non_null(want);
    if (r.status != 0) fail_msg("'messages %s' exited %d: %s", args, r.status, r.err);
    assert_string_equal(r.out, want);
    assert_int_equal(r.out_len, len);
    free(want);
    run_free(&r);
}

static void encode_vectors(void **state) {
    (void)state;
    expect_file("encode " VEC "openai.json", VEC "openai.xml");
    expect_file("encode --encoding text " VEC "openai.json", VEC "openai.txt");
    expect_file("encode --encoding=xml " VEC "anthropic.json", VEC "anthropic.xml");
    expect_file("encode --encoding text --format anthropic " VEC "anthropic.json", VEC "anthropic.txt");
    expect_file("encode --format langchain " VEC "langchain.json", VEC "langchain.xml");
    expect_file("encode " VEC "splice.json", VEC "splice.xml");
    expect_file("encode " VEC "passthrough.json", VEC "passthrough.xml");
}

static void encode_stdin_and_options(void **state) {
    (void)state;
    run r = cli("encode --strip-ansi -", "[{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"\\u001b[1mbold\\u001b[0m\"}]");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "<thread>\n  <event type=\"tool_output\" id=\"0\" name=\"unknown\" call_id=\"c\" "
                               "status=\"success\" iteration=\"0\">bold</event>\n</thread>\n");
    assert_string_equal(r.err, "");
    run_free(&r);
    r = cli("encode", "[]");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "<thread>\n</thread>\n");
    run_free(&r);
    r = cli("encode --encoding text", "[]");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "\n");
    run_free(&r);
}

static void encode_errors(void **state) {
    (void)state;
    /* input rejected: 1, with the place */
    run r = cli("encode --format openai", "[{\"type\":\"human\",\"content\":\"x\"}]");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "<stdin>:1:2: message 0: 'role' is missing\n");
    run_free(&r);
    r = cli("encode", "[{\"role\":\"user\",\n \"content\": x}]");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "<stdin>:2:13: "));
    run_free(&r);
    r = cli("encode " VEC "no-such-file.json", NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "no-such-file.json"));
    run_free(&r);
    /* usage: 2 */
    r = cli("encode --format yaml", "[]");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--format is openai, anthropic, langchain or auto, not 'yaml'"));
    run_free(&r);
    r = cli("encode --encoding", "[]");
    assert_int_equal(r.status, 2);
    run_free(&r);
    r = cli("encode --bogus", "[]");
    assert_int_equal(r.status, 2);
    run_free(&r);
    r = cli("encode a.json b.json", "[]");
    assert_int_equal(r.status, 2);
    run_free(&r);
    r = cli("frobnicate", "");
    assert_int_equal(r.status, 2);
    run_free(&r);
    r = cli("", "");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "Usage: agentwire messages"));
    run_free(&r);
}

static void toolcalls(void **state) {
    (void)state;
    run r = cli("toolcalls " VEC "toolcalls.md", NULL);
    size_t len;
    char *want = aw_test_read_file(VEC "toolcalls.json", &len);
    assert_non_null(want);
    /* a block that does not parse: reported, kept, and still exit 0 */
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want);
    assert_string_equal(r.err, VEC "toolcalls.md:19:52: trailing comma before '}'\n");
    free(want);
    run_free(&r);
    r = cli("toolcalls", "no calls here");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "{\"tool_calls\":[],\"text\":\"no calls here\",\"errors\":[]}\n");
    assert_string_equal(r.err, "");
    run_free(&r);
    r = cli("toolcalls --json", "");
    assert_int_equal(r.status, 2);
    run_free(&r);
}

static void detect(void **state) {
    (void)state;
    run r = cli("detect " VEC "anthropic.json", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "anthropic\n");
    run_free(&r);
    r = cli("detect", "[{\"type\":\"ai\",\"content\":\"\"}]");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "langchain\n");
    run_free(&r);
    r = cli("detect", "[]");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "<stdin>: cannot tell the shape of these messages\n");
    run_free(&r);
}

static void help_everywhere(void **state) {
    (void)state;
    static const char *const args[] = {"--help", "-h", "encode --help", "toolcalls --help", "detect -h",
                                       "encode --format openai --help"};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        run r = cli(args[i], "");
        assert_int_equal(r.status, 0);
        assert_memory_equal(r.out, "Usage: agentwire messages", 25);
        assert_int_equal(r.out[r.out_len - 1], '\n');
        run_free(&r);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encode_vectors),
        cmocka_unit_test(encode_stdin_and_options),
        cmocka_unit_test(encode_errors),
        cmocka_unit_test(toolcalls),
        cmocka_unit_test(detect),
        cmocka_unit_test(help_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
