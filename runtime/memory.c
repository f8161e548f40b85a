/* A conversation's memory: subjects, keywords and summary folded from
 * each reply's analysis (memory.h has the rules). Pure: no I/O; the
 * store keeps the replies and this folds them when a query is made. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/event.h"
#include "agentwire/memory.h"
#include "internal/rt_util.h"

typedef struct entry {
    char *key;         /* subject name / keyword term, normalized */
    char *text;        /* subject description / keyword's subject */
    double confidence; /* keywords */
    size_t last;       /* the exchange that mentioned it last (from 1) */
    size_t order;      /* its place in that exchange's reply */
} entry;

typedef struct entries {
    entry *items;
    size_t count, cap;
} entries;

struct aw_memory {
    const aw_allocator *alloc;
    entries subjects, keywords;
    aw_buf summary;
    size_t exchanges;
};

aw_memory *aw_memory_new(const aw_allocator *alloc)
{
    aw_memory *m = aw_malloc(alloc, sizeof *m);
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    m->alloc = alloc;
    aw_buf_init(&m->summary, alloc);
    return m;
}

static void entries_free(const aw_allocator *a, entries *e)
{
    for (size_t i = 0; i < e->count; i++) {
        aw_free(a, e->items[i].key);
        aw_free(a, e->items[i].text);
    }
    aw_free(a, e->items);
}

void aw_memory_free(aw_memory *m)
{
    if (!m)
        return;
    entries_free(m->alloc, &m->subjects);
    entries_free(m->alloc, &m->keywords);
    aw_buf_free(&m->summary);
    aw_free(m->alloc, m);
}

size_t aw_memory_exchanges(const aw_memory *m) { return m->exchanges; }

/* Lowercase ASCII; spaces, tabs, underscores and commas as '-'; runs of
 * '-' as one; none at either end. Commas must go: the query's lists are
 * comma-separated. NULL for an empty result or no memory (*oom then). */
static char *normalize(const aw_allocator *a, const char *s, size_t n, bool *oom)
{
    char *out = aw_malloc(a, n + 1);
    if (!out) {
        *oom = true;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '_' || c == ',' || c == '-') {
            if (k && out[k - 1] != '-')
                out[k++] = '-';
        } else {
            out[k++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
    }
    while (k && out[k - 1] == '-')
        k--;
    out[k] = 0;
    if (!k) {
        aw_free(a, out);
        return NULL;
    }
    return out;
}

static entry *find(entries *e, const char *key)
{
    for (size_t i = 0; i < e->count; i++)
        if (!strcmp(e->items[i].key, key))
            return &e->items[i];
    return NULL;
}

/* Update the entry for key (taking key), or add one. */
static int upsert(const aw_allocator *a, entries *e, char *key, const char *text, size_t text_len, double confidence,
                  size_t last, size_t order, const entry **out)
{
    char *t = aw_rt_strndup(a, text ? text : "", text ? text_len : 0);
    if (!t) {
        aw_free(a, key);
        return AW_ENOMEM;
    }
    entry *x = find(e, key);
    if (x) {
        aw_free(a, key);
        if (text_len || !text) {
            aw_free(a, x->text);
            x->text = t;
        } else {
            aw_free(a, t); /* an empty description keeps the one known */
        }
    } else {
        if (e->count == e->cap) {
            size_t cap = e->cap ? e->cap * 2 : 16;
            entry *items = aw_realloc(a, e->items, cap * sizeof *items);
            if (!items) {
                aw_free(a, key);
                aw_free(a, t);
                return AW_ENOMEM;
            }
            e->items = items;
            e->cap = cap;
        }
        x = &e->items[e->count++];
        x->key = key;
        x->text = t;
    }
    x->confidence = confidence;
    x->last = last;
    x->order = order;
    if (out)
        *out = x;
    return 0;
}

static aw_text text_of(const aw_json_value *v)
{
    return aw_json_is_string(v) ? (aw_text){v->u.str.ptr, v->u.str.len} : (aw_text){"", 0};
}

/* A repeatable child is an array in the typed form; a lone object is
 * taken as one. */
static size_t items_of(const aw_json_value *v) { return aw_json_is_array(v) ? aw_json_count(v) : v ? 1 : 0; }
static const aw_json_value *item_at(const aw_json_value *v, size_t i)
{
    return aw_json_is_array(v) ? aw_json_at(v, i) : v;
}

/* The summary grows by each update; past the limit the oldest text goes,
 * from a sentence's start when one is near, else a character's. */
static int fold_summary(aw_buf *sum, aw_text update)
{
    while (update.len && (update.ptr[0] == ' ' || update.ptr[0] == '\n'))
        update.ptr++, update.len--;
    while (update.len && (update.ptr[update.len - 1] == ' ' || update.ptr[update.len - 1] == '\n'))
        update.len--;
    if (!update.len)
        return 0;
    if ((sum->len && aw_buf_putc(sum, ' ')) || aw_buf_append(sum, update.ptr, update.len))
        return AW_ENOMEM;
    if (sum->len <= AW_MEMORY_MAX_SUMMARY)
        return 0;
    size_t cut = sum->len - AW_MEMORY_MAX_SUMMARY;
    while (cut < sum->len && ((unsigned char)sum->data[cut] & 0xC0) == 0x80)
        cut++;
    for (size_t i = cut; i + 1 < sum->len && i < cut + 200; i++)
        if ((sum->data[i] == '.' || sum->data[i] == '!' || sum->data[i] == '?') && sum->data[i + 1] == ' ') {
            cut = i + 2;
            break;
        }
    memmove(sum->data, sum->data + cut, sum->len - cut);
    sum->len -= cut;
    sum->data[sum->len] = 0;
    return 0;
}

int aw_memory_add(aw_memory *m, const aw_json_value *reply, aw_error *err)
{
    aw_error_clear(err);
    if (!aw_json_is_object(reply))
        return aw_rt_error(err, AW_ETYPE, "a reply must be an object (a typed <llmResponse>)");
    const aw_json_value *analysis = aw_json_get(reply, "analysis");
    const aw_json_value *subjects = aw_json_get(analysis, "subject");
    /* check everything before changing anything */
    for (size_t i = 0; i < items_of(subjects); i++) {
        const aw_json_value *s = item_at(subjects, i);
        if (!aw_json_is_string(aw_json_get(s, "name")))
            return aw_rt_error(err, AW_ETYPE, "subject %zu has no name", i + 1);
        const aw_json_value *kw = aw_json_get(s, "keyword");
        for (size_t k = 0; k < items_of(kw); k++) {
            const aw_json_value *c = aw_json_get(item_at(kw, k), "confidence");
            if (!aw_json_is_string(aw_json_get(item_at(kw, k), "term")) || !aw_json_is_number(c) ||
                !isfinite(c->u.num.d))
                return aw_rt_error(err, AW_ETYPE, "subject %zu, keyword %zu: a term and a numeric confidence are needed",
                                   i + 1, k + 1);
        }
    }
    size_t n = ++m->exchanges, subject_order = 0, keyword_order = 0;
    bool oom = false;
    for (size_t i = 0; i < items_of(subjects) && !oom; i++) {
        const aw_json_value *s = item_at(subjects, i);
        aw_text name = text_of(aw_json_get(s, "name"));
        char *key = normalize(m->alloc, name.ptr, name.len, &oom);
        if (!key)
            continue;
        aw_text desc = text_of(aw_json_get(s, "description"));
        const entry *sub = NULL;
        if (upsert(m->alloc, &m->subjects, key, desc.ptr, desc.len, 0, n, subject_order++, &sub)) {
            oom = true;
            break;
        }
        const char *subject_key = sub->key;
        const aw_json_value *kw = aw_json_get(s, "keyword");
        for (size_t k = 0; k < items_of(kw) && !oom; k++) {
            const aw_json_value *w = item_at(kw, k);
            double conf = aw_json_get(w, "confidence")->u.num.d;
            if (conf < AW_MEMORY_MIN_CONFIDENCE)
                continue;
            aw_text term = text_of(aw_json_get(w, "term"));
            char *tkey = normalize(m->alloc, term.ptr, term.len, &oom);
            if (tkey && upsert(m->alloc, &m->keywords, tkey, subject_key, strlen(subject_key), conf, n, keyword_order++,
                                NULL))
                oom = true;
        }
    }
    if (!oom && fold_summary(&m->summary, text_of(aw_json_get(analysis, "summaryUpdate"))))
        oom = true;
    return oom ? aw_rt_error(err, AW_ENOMEM, "out of memory") : 0;
}

/* Most recent first: the later exchange, then the earlier place in it. */
static int recent_first(const void *pa, const void *pb)
{
    const entry *a = *(const entry *const *)pa, *b = *(const entry *const *)pb;
    if (a->last != b->last)
        return a->last > b->last ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order ? 1 : 0;
}

/* The entries, most recent first, at most max: an array of pointers. */
static const entry **ranked(const aw_allocator *a, const entries *e, size_t max, size_t *n)
{
    const entry **list = aw_malloc(a, (e->count + 1) * sizeof *list);
    if (!list)
        return NULL;
    for (size_t i = 0; i < e->count; i++)
        list[i] = &e->items[i];
    qsort(list, e->count, sizeof *list, recent_first);
    *n = e->count < max ? e->count : max;
    return list;
}

/* The end of aw_memory_json and aw_memory_query: the ranked lists freed,
 * the document handed over (rc 0) or freed. */
static int hand_over(const aw_memory *m, const entry **subs, const entry **kws, aw_json_doc *d, aw_json_value *root,
                     int rc, aw_json_doc **out)
{
    aw_free(m->alloc, subs);
    aw_free(m->alloc, kws);
    if (rc) {
        aw_json_doc_free(d);
        return AW_ENOMEM;
    }
    aw_json_doc_set_root(d, root);
    *out = d;
    return 0;
}

int aw_memory_json(const aw_memory *m, aw_json_doc **out)
{
    size_t ns = 0, nk = 0;
    const entry **subs = ranked(m->alloc, &m->subjects, AW_MEMORY_MAX_SUBJECTS, &ns);
    const entry **kws = ranked(m->alloc, &m->keywords, AW_MEMORY_MAX_KEYWORDS, &nk);
    aw_json_doc *d = subs && kws ? aw_json_doc_new(m->alloc) : NULL;
    aw_json_value *root = d ? aw_json_new_object(d) : NULL;
    aw_json_value *sa = d ? aw_json_new_array(d) : NULL, *ka = d ? aw_json_new_array(d) : NULL;
    int rc = !root || !sa || !ka;
    for (size_t i = 0; i < ns && !rc; i++) {
        aw_json_value *o = aw_json_new_object(d);
        rc = !o || aw_json_object_set_string(d, o, "name", subs[i]->key, strlen(subs[i]->key)) ||
             aw_json_object_set_string(d, o, "description", subs[i]->text, strlen(subs[i]->text)) ||
             aw_json_array_push(d, sa, o);
    }
    for (size_t i = 0; i < nk && !rc; i++) {
        aw_json_value *o = aw_json_new_object(d);
        rc = !o || aw_json_object_set_string(d, o, "term", kws[i]->key, strlen(kws[i]->key)) ||
             aw_json_object_set_number(d, o, "confidence", kws[i]->confidence) ||
             aw_json_object_set_string(d, o, "subject", kws[i]->text, strlen(kws[i]->text)) ||
             aw_json_array_push(d, ka, o);
    }
    rc = rc || aw_json_object_set(d, root, "subjects", 8, sa) || aw_json_object_set(d, root, "keywords", 8, ka) ||
         aw_json_object_set_string(d, root, "summary", m->summary.data ? m->summary.data : "", m->summary.len) ||
         aw_json_object_set_int(d, root, "exchanges", (int64_t)m->exchanges);
    return hand_over(m, subs, kws, d, root, rc, out);
}

int aw_memory_query(const aw_memory *m, const char *topic, int64_t message_count, const char *message,
                    aw_json_doc **out)
{
    size_t ns = 0, nk = 0;
    const entry **subs = ranked(m->alloc, &m->subjects, AW_MEMORY_MAX_SUBJECTS, &ns);
    const entry **kws = ranked(m->alloc, &m->keywords, AW_MEMORY_MAX_KEYWORDS, &nk);
    aw_json_doc *d = subs && kws ? aw_json_doc_new(m->alloc) : NULL;
    aw_json_value *root = d ? aw_json_new_object(d) : NULL, *ctx = d ? aw_json_new_object(d) : NULL;
    aw_json_value *sa = d ? aw_json_new_array(d) : NULL, *ka = d ? aw_json_new_array(d) : NULL;
    int rc = !root || !ctx || !sa || !ka;
    for (size_t i = 0; i < ns && !rc; i++) {
        aw_json_value *v = aw_json_new_string(d, subs[i]->key, strlen(subs[i]->key));
        rc = !v || aw_json_array_push(d, sa, v);
    }
    for (size_t i = 0; i < nk && !rc; i++) {
        aw_json_value *v = aw_json_new_string(d, kws[i]->key, strlen(kws[i]->key));
        rc = !v || aw_json_array_push(d, ka, v);
    }
    rc = rc || aw_json_object_set_string(d, root, "userMessage", message, strlen(message)) ||
         aw_json_object_set_string(d, ctx, "topicId", topic, strlen(topic)) ||
         aw_json_object_set_int(d, ctx, "messageCount", message_count) ||
         (ns && aw_json_object_set(d, ctx, "activeSubjects", 14, sa)) ||
         (nk && aw_json_object_set(d, ctx, "recentKeywords", 14, ka)) || aw_json_object_set(d, root, "context", 7, ctx);
    return hand_over(m, subs, kws, d, root, rc, out);
}
