/* A tiny program built against the installed agentwire. */
#include <stdio.h>
#include <string.h>

#include <agentwire/agentwire.h>

int main(void) {
    const char *in = "{\"b\":1,\"a\":[true,null,\"x\"],\"2\":0.1}";
    const char *want = "{\"2\":0.1,\"b\":1,\"a\":[true,null,\"x\"]}";
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_json_parse(in, strlen(in), NULL, &doc, &err)) {
        fprintf(stderr, "parse: %s\n", err.message);
        return 1;
    }
    aw_buf out;
    aw_buf_init(&out, NULL);
    int rc = aw_json_write(aw_json_doc_root(doc), NULL, &out, &err);
    aw_json_doc_free(doc);
    if (rc || strcmp(out.data, want) != 0) {
        fprintf(stderr, "got %s\n", out.data ? out.data : "(nothing)");
        aw_buf_free(&out);
        return 1;
    }
    printf("agentwire %s: %s\n", aw_version(), out.data);
    aw_buf_free(&out);
    return 0;
}
