/* <thread> XML -> events (JSON), with expat. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/thread.h"
#include "internal/errors.h"
#include "internal/expat.h"
#include "internal/json.h"
#include "internal/strmap.h"

/* attributes of the event being read */
enum { A_TYPE, A_ID, A_NAME, A_CALL_ID, A_ITERATION, A_RECOVERABLE, A_SUMMARIZED, A_DURATION,
       A_GROUP, A_COUNT };
static const char *const attr_names[A_COUNT] = {
    "type", "id", "name", "call_id", "iteration", "recoverable", "summarizedIterations",
    "duration_ms", "parallel_group",
};

/* An unpaired tool_input, kept on a per-name stack so each tool_output
 * finds the nearest earlier one in O(1). */
typedef struct pending_input {
    const char *call_id; /* "call_<id>", in the output document */
    size_t call_id_len;
    size_t prev; /* index+1 of the next older unpaired input of this name, 0: none */
} pending_input;

typedef struct decoder {
    aw_expat x;
    aw_json_doc *doc;
    aw_json_value *events;
    int depth;
    int seen_root;
    aw_buf attrs[A_COUNT];
    int has[A_COUNT];
    aw_buf body;
    aw_strmap unpaired;    /* name -> top of stack, as aw_text{ptr unused, len = index+1} */
    pending_input *inputs;
    size_t ninputs, cap_inputs;
} decoder;

static int all_space(const char *s, int n) {
    for (int i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return 0;
    return 1;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts) {
    decoder *d = (decoder *)((aw_expat *)ud);
    if (d->x.stopped) return;
    if (d->depth == 0) {
        if (strcmp(name, "thread") != 0)
            return aw__expat_fail(&d->x, AW_EVALID, "the root element must be <thread>, not <%s>", name);
        d->seen_root = 1;
    } else if (d->depth == 1) {
        if (strcmp(name, "event") != 0)
            return aw__expat_fail(&d->x, AW_EVALID, "<thread> may hold only <event> elements, not <%s>", name);
        for (int k = 0; k < A_COUNT; k++) {
            aw_buf_clear(&d->attrs[k]);
            d->has[k] = 0;
        }
        aw_buf_clear(&d->body);
        for (int i = 0; atts[i]; i += 2)
            for (int k = 0; k < A_COUNT; k++)
                if (strcmp(atts[i], attr_names[k]) == 0) {
                    d->has[k] = 1;
                    if (aw_buf_append_str(&d->attrs[k], atts[i + 1]) || aw_buf_reserve(&d->attrs[k], 0))
                        return aw__expat_fail(&d->x, AW_ENOMEM, "out of memory");
                }
        if (!d->has[A_TYPE]) return aw__expat_fail(&d->x, AW_EVALID, "<event> without a type attribute");
    } else {
        return aw__expat_fail(&d->x, AW_EVALID, "<event> may hold only text, not <%s>", name);
    }
    d->depth++;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
    decoder *d = (decoder *)((aw_expat *)ud);
    if (d->x.stopped) return;
    if (d->depth == 2) {
        if (aw_buf_append(&d->body, s, (size_t)len)) aw__expat_fail(&d->x, AW_ENOMEM, "out of memory");
    } else if (!all_space(s, len)) {
        aw__expat_fail(&d->x, AW_EVALID, "text outside <event> elements");
    }
}

/* ---- building the JSON event ------------------------------------------- */

static const char *attr(decoder *d, int k) { return d->has[k] ? d->attrs[k].data : NULL; }

/* A JSON number of at most 64 characters, or JavaScript's spelling of the
 * values JSON has no text for. The encoder writes numbers as JavaScript
 * prints them: JSON number text for every finite value, and "Infinity",
 * "-Infinity" or "NaN" otherwise (a JSON 1e400 reads as Infinity, as with
 * JSON.parse), so the decoder must take those back too. */
static int parse_number_n(const char *s, size_t n, double *out) {
    char tmp[72];
    if (n == 8 && !memcmp(s, "Infinity", 8)) return *out = HUGE_VAL, 0;
    if (n == 9 && !memcmp(s, "-Infinity", 9)) return *out = -HUGE_VAL, 0;
    if (n == 3 && !memcmp(s, "NaN", 3)) return *out = NAN, 0;
    if (n == 0 || n > 64) return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    size_t i = 0;
    if (tmp[i] == '-') i++;
    if (tmp[i] == '0') i++;
    else if (tmp[i] >= '1' && tmp[i] <= '9') while (tmp[i] >= '0' && tmp[i] <= '9') i++;
    else return -1;
    if (tmp[i] == '.') {
        i++;
        if (!(tmp[i] >= '0' && tmp[i] <= '9')) return -1;
        while (tmp[i] >= '0' && tmp[i] <= '9') i++;
    }
    if (tmp[i] == 'e' || tmp[i] == 'E') {
        i++;
        if (tmp[i] == '+' || tmp[i] == '-') i++;
        if (!(tmp[i] >= '0' && tmp[i] <= '9')) return -1;
        while (tmp[i] >= '0' && tmp[i] <= '9') i++;
    }
    if (i != n) return -1;
    *out = aw__json_strtod(tmp, n);
    return 0;
}

static int parse_number(const char *s, double *out) { return parse_number_n(s, strlen(s), out); }

static int set_str(decoder *d, aw_json_value *obj, const char *key, const char *s, size_t n,
                   const char **stored) {
    aw_json_value *v = aw_json_new_string(d->doc, s, n);
    if (!v) return AW_ENOMEM;
    if (stored) *stored = v->u.str.ptr;
    return aw_json_object_set(d->doc, obj, key, strlen(key), v);
}

static int set_num_attr(decoder *d, aw_json_value *obj, const char *key, int k) {
    double num;
    if (parse_number(attr(d, k), &num)) {
        aw__expat_fail(&d->x, AW_EVALID, "attribute '%s' must be a number, not '%s'", attr_names[k], attr(d, k));
        return AW_EVALID;
    }
    return aw_json_object_set_number(d->doc, obj, key, num);
}

static int push_input(decoder *d, const char *name, size_t name_len, const char *cid, size_t cid_len) {
    if (d->ninputs == d->cap_inputs) {
        size_t cap = d->cap_inputs ? d->cap_inputs * 2 : 64;
        pending_input *p = aw_realloc(d->x.alloc, d->inputs, cap * sizeof *p);
        if (!p) return AW_ENOMEM;
        d->inputs = p;
        d->cap_inputs = cap;
    }
    aw_text key = {name, name_len}, top = {name, 0};
    aw__strmap_get(&d->unpaired, key, &top);
    pending_input *in = &d->inputs[d->ninputs++];
    in->call_id = cid;
    in->call_id_len = cid_len;
    in->prev = top.len;
    aw_text now = {name, d->ninputs};
    return aw__strmap_set(&d->unpaired, key, now);
}

/* The nearest earlier unpaired input of this name, taken off its stack
 * (*in is NULL when there is none). Fails only for lack of memory, which
 * must not be mistaken for "no input": the pairing would silently change. */
static int pop_input(decoder *d, const char *name, size_t name_len, pending_input **in) {
    aw_text key = {name, name_len}, top;
    *in = NULL;
    if (!aw__strmap_get(&d->unpaired, key, &top) || top.len == 0) return 0;
    pending_input *found = &d->inputs[top.len - 1];
    top.len = found->prev;
    int rc = aw__strmap_set(&d->unpaired, key, top);
    if (!rc) *in = found;
    return rc;
}

static int finish_event(decoder *d) {
    const char *type = attr(d, A_TYPE);
    const char *body = d->body.data ? d->body.data : "";
    size_t body_len = d->body.len;
    aw_json_value *obj = aw_json_new_object(d->doc);
    if (!obj) return AW_ENOMEM;
    int rc = 0;
    if (!d->has[A_ITERATION]) {
        aw__expat_fail(&d->x, AW_EVALID, "<event type=\"%s\"> without an iteration attribute", type);
        return AW_EVALID;
    }
    const char *role = NULL, *field = NULL, *evtype = NULL;
    if (!strcmp(type, "human")) role = "user";
    else if (!strcmp(type, "ai")) role = "assistant";
    else if (!strcmp(type, "system")) role = "system";
    else if (!strcmp(type, "error")) evtype = "error", field = "error";
    else if (!strcmp(type, "human_input_requested")) evtype = type, field = "question";
    else if (!strcmp(type, "human_input_received")) evtype = type, field = "response";
    else if (!strcmp(type, "completion")) evtype = type, field = "result";
    else if (!strcmp(type, "summary")) evtype = type, field = "summary";
    else if (strcmp(type, "tool_input") && strcmp(type, "tool_output")) {
        aw__expat_fail(&d->x, AW_EVALID, "unknown event type '%s'", type);
        return AW_EVALID;
    }

    if (role) {
        rc = aw_json_object_set_string(d->doc, obj, "type", "message", 7);
        if (!rc) rc = aw_json_object_set_string(d->doc, obj, "role", role, strlen(role));
        if (!rc) rc = aw_json_object_set_string(d->doc, obj, "content", body, body_len);
    } else if (evtype) {
        rc = aw_json_object_set_string(d->doc, obj, "type", evtype, strlen(evtype));
        if (!rc && !strcmp(type, "summary")) {
            aw_json_value *its = aw_json_new_array(d->doc);
            const char *s = attr(d, A_SUMMARIZED);
            if (!its) return AW_ENOMEM;
            while (!rc && s && *s) {
                const char *comma = strchr(s, ',');
                size_t n = comma ? (size_t)(comma - s) : strlen(s);
                double num;
                if (parse_number_n(s, n, &num)) {
                    aw__expat_fail(&d->x, AW_EVALID, "summarizedIterations must be numbers joined by ','");
                    return AW_EVALID;
                }
                aw_json_value *nv = aw_json_new_number(d->doc, num);
                rc = nv ? aw_json_array_push(d->doc, its, nv) : AW_ENOMEM;
                s = comma ? comma + 1 : NULL;
            }
            if (!rc) rc = aw_json_object_set(d->doc, obj, "summarizedIterations", 20, its);
        }
        if (!rc) rc = aw_json_object_set_string(d->doc, obj, field, body, body_len);
        if (!rc && !strcmp(type, "error")) {
            const char *r = attr(d, A_RECOVERABLE);
            rc = aw_json_object_set_bool(d->doc, obj, "recoverable", r && !strcmp(r, "true"));
        }
        if (!rc && !strcmp(type, "completion")) rc = aw_json_object_set_bool(d->doc, obj, "verified", false);
    } else {
        const char *name = attr(d, A_NAME) ? attr(d, A_NAME) : "unknown";
        size_t name_len = strlen(name);
        const char *id = attr(d, A_ID) ? attr(d, A_ID) : "";
        const char *cid = attr(d, A_CALL_ID);
        char made[128];
        int is_input = !strcmp(type, "tool_input");
        rc = aw_json_object_set_string(d->doc, obj, "type", is_input ? "tool_call" : "tool_result",
                                       is_input ? 9 : 11);
        if (!rc && is_input) {
            const char *stored_name = NULL, *stored_cid = NULL;
            rc = set_str(d, obj, "toolName", name, name_len, &stored_name);
            size_t cid_len;
            if (cid && *cid) {
                cid_len = strlen(cid);
            } else {
                cid_len = (size_t)snprintf(made, sizeof made, "call_%.100s", id);
                cid = made;
            }
            if (!rc) rc = set_str(d, obj, "toolCallId", cid, cid_len, &stored_cid);
            /* inputs that carry call_id are paired by it, not by position */
            if (!rc && !(attr(d, A_CALL_ID) && *attr(d, A_CALL_ID)))
                rc = push_input(d, stored_name, name_len, stored_cid, cid_len);
            if (!rc) {
                aw_json_doc *args = NULL;
                aw_json_read_options ro = {d->x.alloc, 0, false};
                aw_error perr;
                int prc = aw_json_parse(body, body_len, &ro, &args, &perr);
                if (prc == AW_ENOMEM) return AW_ENOMEM;
                aw_json_value *v = prc ? aw_json_new_string(d->doc, body, body_len)
                                       : aw_json_copy(d->doc, aw_json_doc_root(args));
                aw_json_doc_free(args);
                rc = v ? aw_json_object_set(d->doc, obj, "args", 4, v) : AW_ENOMEM;
            }
        } else if (!rc) {
            const char *use = NULL;
            size_t use_len = 0;
            if (cid && *cid) {
                use = cid;
                use_len = strlen(cid);
            } else {
                pending_input *in;
                if (pop_input(d, name, name_len, &in)) return AW_ENOMEM;
                if (in) {
                    use = in->call_id;
                    use_len = in->call_id_len;
                } else {
                    use_len = (size_t)snprintf(made, sizeof made, "call_%.100s", id);
                    use = made;
                }
            }
            rc = set_str(d, obj, "toolCallId", use, use_len, NULL);
            if (!rc) rc = aw_json_object_set_string(d->doc, obj, "result", body, body_len);
            if (!rc && d->has[A_DURATION]) rc = set_num_attr(d, obj, "durationMs", A_DURATION);
            if (!rc && d->has[A_GROUP])
                rc = aw_json_object_set_string(d->doc, obj, "parallelGroup", attr(d, A_GROUP),
                                               d->attrs[A_GROUP].len);
        }
    }
    if (!rc) rc = aw_json_object_set_int(d->doc, obj, "timestamp", 0);
    if (!rc) rc = set_num_attr(d, obj, "iteration", A_ITERATION);
    if (!rc) rc = aw_json_array_push(d->doc, d->events, obj);
    return rc;
}

static void XMLCALL on_end(void *ud, const XML_Char *name) {
    decoder *d = (decoder *)((aw_expat *)ud);
    (void)name;
    if (d->x.stopped) return;
    d->depth--;
    if (d->depth == 1) {
        int rc = finish_event(d);
        if (rc == AW_ENOMEM) aw__expat_fail(&d->x, AW_ENOMEM, "out of memory");
    }
}

int aw_thread_decode(const char *xml, size_t len, const aw_thread_decode_options *opts,
                     aw_json_doc **out, aw_error *err) {
    if (!out || (!xml && len)) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    decoder d;
    memset(&d, 0, sizeof d);
    int rc = aw__expat_init(&d.x, alloc, err);
    if (rc) return rc;
    for (int k = 0; k < A_COUNT; k++) aw_buf_init(&d.attrs[k], alloc);
    aw_buf_init(&d.body, alloc);
    aw__strmap_init(&d.unpaired, alloc);
    d.doc = aw_json_doc_new(alloc);
    d.events = d.doc ? aw_json_new_array(d.doc) : NULL;
    if (!d.events) {
        rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    } else {
        XML_SetElementHandler(d.x.parser, on_start, on_end);
        XML_SetCharacterDataHandler(d.x.parser, on_text);
        rc = aw__expat_parse(&d.x, xml ? xml : "", len);
        if (!rc && !d.seen_root) rc = aw__error_set(err, AW_ESYNTAX, "no <thread> element");
    }
    aw__expat_free(&d.x);
    for (int k = 0; k < A_COUNT; k++) aw_buf_free(&d.attrs[k]);
    aw_buf_free(&d.body);
    aw__strmap_free(&d.unpaired);
    aw_free(alloc, d.inputs);
    if (rc) {
        aw_json_doc_free(d.doc);
        return rc;
    }
    aw_json_doc_set_root(d.doc, d.events);
    *out = d.doc;
    return 0;
}
