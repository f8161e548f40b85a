/* Reading events from JSON text one at a time, shared by the event list
 * (which keeps every event) and the streaming thread encoder (which keeps
 * one line's document at a time), so both name a bad line the same way. */
#ifndef AW_INTERNAL_EVENT_H
#define AW_INTERNAL_EVENT_H

#include <stddef.h>

#include "agentwire/event.h"
#include "internal/arena.h"
#include "internal/json.h"

/* Is text one JSON array of events? True when its first non-blank
 * character (after a BOM the options allow) is '['; otherwise it is read
 * as JSON lines. */
int aw__event_input_is_array(const char *text, size_t len, const aw_json_read_options *opts);

/* A cursor over the lines of JSON-lines text. Blank lines are skipped but
 * counted, so errors carry the line number. */
typedef struct aw__event_lines {
    aw__json_parser parser; /* its scratch stacks are reused line after line */
    const char *text;
    size_t len;
    size_t pos;  /* start of the next line */
    size_t line; /* number of the line last read, from 1 */
} aw__event_lines;

void aw__event_lines_init(aw__event_lines *r, const char *text, size_t len, const aw_json_read_options *opts);
void aw__event_lines_free(aw__event_lines *r);

/* Read the next non-blank line into arena and check it as an event: 1 and
 * *ev (pointing into arena), 0 at the end of the text, or a negative error
 * with err->line set ("field 'args' must be an object", or a JSON syntax
 * error with its offset in the whole text). */
int aw__event_lines_next(aw__event_lines *r, aw_arena *arena, aw_event *ev, aw_error *err);

#endif
