/* Private parts of the thread codec shared by the whole-list encoder, the
 * JSON-text encoder and the append-only writer. */
#ifndef AW_INTERNAL_THREAD_H
#define AW_INTERNAL_THREAD_H

#include "agentwire/thread.h"

/* Write one <event ...>body</event> for ev at position id. scratch is a
 * reusable buffer for the compact JSON of args and non-string results. */
int aw__thread_event(const aw_event *ev, size_t id, aw_text tool_name, const aw_thread_options *opts,
                     aw_buf *out, aw_buf *scratch);

/* Write what follows the last event: "\n</thread>", and "\n" and the
 * prefill when there is one. */
int aw__thread_close(const aw_thread_options *opts, aw_buf *out);

/* Kinds that become an <event> line. */
int aw__thread_is_written(aw_event_kind kind);

#endif
