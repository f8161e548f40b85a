/* The final report (seed 001's three layers): the wrapper's status and
 * format taken from the tag or the native call (layer 1), the payload
 * processed by its format (layer 2: json parsed and checked, sub-agent
 * passed through untouched, text as written), and the report the run
 * ends with (layer 3). A contract run's report must also be the contract's
 * document (seed 004: strict, no fallbacks). */
#include <stdio.h>
#include <string.h>

#include "internal/rt_util.h"
#include "internal/run_impl.h"

static aw_run_status status_of(aw_text s)
{
    if (s.len == 7 && !memcmp(s.ptr, "success", 7))
        return AW_RUN_SUCCESS;
    if (s.len == 7 && !memcmp(s.ptr, "partial", 7))
        return AW_RUN_PARTIAL;
    return AW_RUN_FAILURE;
}

static int take(aw_run *r, aw_run_status st, aw_report_format fmt, aw_text content, const aw_json_value *json,
                const char *command)
{
    run_final *f = &r->final;
    aw_buf_clear(&f->content);
    aw_json_doc_free(f->json);
    f->json = NULL;
    if (aw_buf_append(&f->content, content.ptr ? content.ptr : "", content.len))
        return AW_ENOMEM;
    if (json) {
        f->json = aw_json_doc_new(r->alloc);
        aw_json_value *copy = f->json ? aw_json_copy(f->json, json) : NULL;
        if (!copy)
            return AW_ENOMEM;
        aw_json_doc_set_root(f->json, copy);
    }
    f->have = true;
    f->status = st;
    f->format = fmt;
    f->command = command;
    return 0;
}

int aw__final_from_xml(aw_run *r, const aw_x_final *f)
{
    if (r->final.have)
        return 0;
    return take(r, status_of(f->status), f->format, f->content, f->json, AW_COMMAND_FINAL_XML);
}

int aw__final_from_native(aw_run *r, run_call *c)
{
    const aw_json_value *a = aw_json_doc_root(c->args);
    const aw_json_value *st = aw_json_get(a, "status");
    const aw_json_value *content = aw_json_get(a, "content");
    if (!content)
        content = aw_json_get(a, "report_content");
    aw_text s = aw_json_is_string(st) ? (aw_text){st->u.str.ptr, st->u.str.len} : (aw_text){"", 0};
    aw_report_format fmt = r->cfg.format;
    if (aw_json_is_string(content))
        return take(r, status_of(s), fmt, (aw_text){content->u.str.ptr, content->u.str.len}, NULL, AW_TOOL_FINAL_REPORT);
    /* json reports may come as the value itself */
    aw_buf text;
    aw_buf_init(&text, r->alloc);
    int rc = content ? aw_json_write(content, NULL, &text, NULL) : 0;
    if (!rc)
        rc = take(r, status_of(s), fmt, (aw_text){text.data ? text.data : "", text.len}, content,
                  AW_TOOL_FINAL_REPORT);
    aw_buf_free(&text);
    return rc;
}

int aw__final_from_text(aw_run *r)
{
    return take(r, AW_RUN_SUCCESS, r->cfg.format, (aw_text){r->visible.data ? r->visible.data : "", r->visible.len},
                NULL, "text");
}

/* Layer 2 for json reports that came without a parsed value (a native
 * report written as a string): parse it now, repairing what models break. */
static int parse_json_report(aw_run *r)
{
    run_final *f = &r->final;
    if (f->format != AW_FORMAT_JSON || f->json)
        return 0;
    aw_buf fixed;
    aw_buf_init(&fixed, r->alloc);
    aw_error err;
    int rc = aw_json_repair(f->content.data ? f->content.data : "", f->content.len, r->alloc, &fixed, NULL, &err);
    if (!rc) {
        aw_json_read_options ro = {.alloc = r->alloc};
        rc = aw_json_parse(fixed.data, fixed.len, &ro, &f->json, &err);
    }
    aw_buf_free(&fixed);
    if (rc == AW_ENOMEM)
        return rc;
    if (rc) {
        f->json = NULL;
        aw_buf_clear(&r->feedback);
        aw_buf_printf(&r->feedback, "- The final report must be JSON: %s. Write it again.", err.message);
        f->have = false;
    }
    return 0;
}

int aw__final_check_contract(aw_run *r)
{
    int rc = parse_json_report(r);
    if (rc || !r->final.have || !r->cfg.contract)
        return rc;
    run_final *f = &r->final;
    aw_contract_options opts = {.extract = true, .alloc = r->alloc};
    aw_contract_issue *issues = NULL;
    size_t n = 0;
    aw_error err;
    const char *doc = f->content.data ? f->content.data : "";
    rc = aw_contract_validate(r->cfg.contract, doc, f->content.len, &opts, &issues, &n, &err);
    if (rc == 0) {
        aw_json_doc *typed = NULL;
        rc = aw_contract_parse(r->cfg.contract, doc, f->content.len, &opts, &typed, &err);
        if (rc == 0) {
            aw_json_doc_free(f->json);
            f->json = typed;
            f->format = AW_FORMAT_JSON;
            return 0;
        }
    }
    if (rc == AW_ENOMEM) {
        aw_free(r->alloc, issues);
        return rc;
    }
    /* Every issue, in document order (seed 004: fail fast, no fallbacks). */
    aw_buf list;
    aw_buf_init(&list, r->alloc);
    if (n == 0)
        aw_buf_printf(&list, "- %s\n", err.message);
    for (size_t i = 0; i < n; i++)
        aw_buf_printf(&list, "- %s:%zu:%zu: %s: %s\n", issues[i].path, issues[i].line, issues[i].column,
                      aw_contract_code_name(issues[i].code), issues[i].message);
    aw_free(r->alloc, issues);
    if (list.len)
        list.data[--list.len] = 0;
    if (r->contract_tries < (int)r->cfg.contract_retries) {
        r->contract_tries++;
        aw_buf_clear(&r->feedback);
        aw_buf_printf(&r->feedback, "Your reply is not a valid <%s> document:\n", aw_contract_name(r->cfg.contract));
        aw_buf_append(&r->feedback, list.data ? list.data : "", list.len);
        f->have = false;
        aw_buf_free(&list);
        return AW_EVALID;
    }
    aw_buf text;
    aw_buf_init(&text, r->alloc);
    aw_buf_printf(&text, "The reply is not a valid <%s> document:\n", aw_contract_name(r->cfg.contract));
    aw_buf_append(&text, list.data ? list.data : "", list.len);
    aw_buf_free(&list);
    aw_json_doc_free(f->json);
    f->json = NULL;
    aw_buf_clear(&f->content);
    aw_buf_append(&f->content, text.data ? text.data : "", text.len);
    aw_buf_free(&text);
    f->status = AW_RUN_FAILURE;
    f->format = AW_FORMAT_TEXT;
    r->final_invalid = true;
    return AW_EVALID;
}

void aw__final_synthesize(aw_run *r, const char *why)
{
    run_final *f = &r->final;
    aw_buf_clear(&f->content);
    snprintf(r->synthesized_why, sizeof r->synthesized_why, "%s", why);
    aw_buf_append_str(&f->content, why); /* else the run's copy above serves */
    aw_json_doc_free(f->json);
    f->json = NULL;
    f->have = true;
    f->status = AW_RUN_FAILURE;
    f->format = AW_FORMAT_TEXT;
    f->command = NULL;
    r->result.synthesized = true;
}
