/* agentwire runtime — a conversation's memory (seed 004's system).
 *
 * Each exchange of a conversation ends with a typed <llmResponse> (the
 * shape aw_contract_parse gives): the reply and its analysis, subjects
 * with keywords, and a summary update. The memory folds those analyses,
 * oldest first, into what the next <llmQuery> carries:
 *
 *   - subjects, one per name (names compared lowercase, with spaces,
 *     underscores and commas read as '-'): a subject marked isNew="false"
 *     is merged into the existing one of its name (its description and
 *     keywords updated, and it becomes the most recent); one not known yet
 *     is added whatever isNew says;
 *   - keywords, one per term: under confidence 0.6 dropped (the seed:
 *     "below 0.6 should be omitted"), else added or updated;
 *   - the summary: each summaryUpdate appended; past 4000 bytes the
 *     oldest sentences go.
 *
 * The query lists at most 20 subjects and 50 keywords, the most recently
 * mentioned first (in the order of the reply that mentioned them last). */
#ifndef AGENTWIRE_MEMORY_H
#define AGENTWIRE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AW_MEMORY_MAX_SUBJECTS 20
#define AW_MEMORY_MAX_KEYWORDS 50
#define AW_MEMORY_MIN_CONFIDENCE 0.6
#define AW_MEMORY_MAX_SUMMARY 4000

typedef struct aw_memory aw_memory;

aw_memory *aw_memory_new(const aw_allocator *alloc);
void aw_memory_free(aw_memory *m);

/* Fold one exchange's typed <llmResponse> in. A reply without an
 * analysis changes nothing but the count; malformed parts (a subject
 * without a name, a confidence that is not a number) are AW_ETYPE. */
int aw_memory_add(aw_memory *m, const aw_json_value *reply, aw_error *err);
/* Exchanges folded so far. */
size_t aw_memory_exchanges(const aw_memory *m);

/* The memory as JSON: {"subjects": [{"name", "description"}],
 * "keywords": [{"term", "confidence", "subject"}], "summary": "..."},
 * most recent first, at most 20 subjects and 50 keywords. */
int aw_memory_json(const aw_memory *m, aw_json_doc **out);

/* The typed <llmQuery> for the next message (aw_contract_build's input):
 * {"userMessage", "context": {"topicId", "messageCount",
 * "activeSubjects": [...], "recentKeywords": [...]}}. */
int aw_memory_query(const aw_memory *m, const char *topic, int64_t message_count, const char *message,
                    aw_json_doc **out);

#ifdef __cplusplus
}
#endif
#endif
