/* Reading events from JSON text one at a time, shared by the event list
 * (which keeps every event) and the streaming thread encoder (which keeps
 * one line's document at a time), so both name a bad line the same way. */
#ifndef AW_INTERNAL_EVENT_H
#define AW_INTERNAL_EVENT_H

#include <stddef.h>

#include "agentwire/event.h"
#include "internal/arena.h"
#include "internal/json.h"

/* aw_event_from_json, and where the error is: *where is the key of the
 * member it names (a mistyped field; it points into the parsed copy of
 * the text), or NULL (a missing field, or no object at all). */
int aw__event_check(const aw_json_value *obj, aw_event *ev, aw_error *err, const char **where);

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
    size_t line_start, line_len; /* the line last read, in text */
} aw__event_lines;

void aw__event_lines_init(aw__event_lines *r, const char *text, size_t len, const aw_json_read_options *opts);
void aw__event_lines_free(aw__event_lines *r);

/* Read the next non-blank line into arena and check it as an event: 1 and
 * *ev (pointing into arena), 0 at the end of the text, or a negative error
 * with err->offset (in the whole text), err->line and err->column set:
 * where a JSON syntax error is, the key of a mistyped field, or the start
 * of an event that lacks a field. */
int aw__event_lines_next(aw__event_lines *r, aw_arena *arena, aw_event *ev, aw_error *err);

/* Fill err's offset, line and column with the place of p, a pointer into
 * the parsed copy of the line last read (a key or a string value). */
void aw__event_lines_locate(const aw__event_lines *r, const char *p, aw_error *err);

/* Same for p in the parsed copy of the text of a list read in the array
 * form (text, len: that text). */
void aw__event_list_locate(const aw_event_list *l, const char *text, size_t len, const char *p, aw_error *err);

/* The event on r's text[start..start + n), a line that is not blank, read
 * into arena; errors as aw__event_lines_next's (with r->line as the line).
 * For readers that pick the lines themselves. */
int aw__event_lines_read(aw__event_lines *r, aw_arena *arena, size_t start, size_t n, aw_event *ev, aw_error *err);

#endif
