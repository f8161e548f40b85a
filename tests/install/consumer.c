/* A tiny program built against the installed agentwire: JSON (our own
 * code), a <thread> decode (through expat) and a schema with a pattern
 * (through PCRE2), so a link line that lacks expat or PCRE2 fails here. */
#include <stdio.h>
#include <string.h>

#include <agentwire/agentwire.h>

static int check_json(void) {
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

static int check_thread(void) {
    const char *xml = "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">2 &lt; 3</event>\n</thread>";
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_thread_decode(xml, strlen(xml), NULL, &doc, &err)) {
        fprintf(stderr, "thread decode: %s\n", err.message);
        return 1;
    }
    const aw_json_value *ev = aw_json_at(aw_json_doc_root(doc), 0);
    const aw_json_value *content = aw_json_get(ev, "content");
    int ok = content && content->type == AW_JSON_STRING && content->u.str.len == 5 &&
             memcmp(content->u.str.ptr, "2 < 3", 5) == 0;
    aw_json_doc_free(doc);
    if (!ok) {
        fprintf(stderr, "thread decode: wrong content\n");
        return 1;
    }
    printf("thread decoded\n");
    return 0;
}

static int check_schema(void) {
    const char *schema = "{\"properties\":{\"path\":{\"type\":\"string\",\"pattern\":\"^/\"}}}";
    const char *inst = "{\"path\":\"etc\"}";
    aw_json_doc *sd = NULL, *id = NULL;
    aw_error err;
    aw_schema *s = NULL;
    if (aw_json_parse(schema, strlen(schema), NULL, &sd, &err) || aw_json_parse(inst, strlen(inst), NULL, &id, &err) ||
        aw_schema_compile(aw_json_doc_root(sd), NULL, &s, &err)) {
        fprintf(stderr, "schema: %s\n", err.message);
        return 1;
    }
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    int ok = aw_schema_validate(s, aw_json_doc_root(id), NULL, &r, &err) == 0 && !r.valid && r.error_count == 1 &&
             strcmp(r.errors[0].keyword_location, "/properties/path/pattern") == 0;
    aw_schema_result_free(&r);
    aw_schema_free(s);
    aw_json_doc_free(sd);
    aw_json_doc_free(id);
    if (!ok) {
        fprintf(stderr, "schema: wrong verdict\n");
        return 1;
    }
    printf("schema checked\n");
    return 0;
}

int main(void) { return check_json() || check_thread() || check_schema(); }
