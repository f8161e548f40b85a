/* The viewer's pages, styles and scripts: runtime/web/, embedded at build
 * time (CMake writes serve_web.h), so the server reads no file and needs
 * no network. "/" is the list, "/sessions/ID" the session page (the id is
 * read by its script), "/static/NAME" the styles and scripts. Each answer
 * carries an ETag (the file's SHA-1) and is revalidated (no-cache): 304
 * when the browser has the file already. */
#include <string.h>

#include "internal/serve_impl.h"

#include "serve_web.h" /* static const aw__static_file web_files[] */

static const char *type_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    static const char *const types[][2] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".svg", "image/svg+xml"},
    };
    for (size_t i = 0; dot && i < sizeof types / sizeof *types; i++)
        if (!strcmp(dot, types[i][0]))
            return types[i][1];
    return "application/octet-stream";
}

static bool is_page(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && !strcmp(dot, ".html");
}

const aw__static_file *aw__static_find(const char *path)
{
    const char *name = NULL;
    if (!strcmp(path, "/"))
        name = "index.html";
    else if (!strcmp(path, "/sessions/"))
        name = "session.html";
    else if (!strncmp(path, "/static/", 8) && !is_page(path))
        name = path + 8; /* pages only under their own paths */
    for (size_t i = 0; name && i < sizeof web_files / sizeof *web_files; i++)
        if (!strcmp(web_files[i].name, name))
            return &web_files[i];
    return NULL;
}

/* If-None-Match holding this ETag (or *). */
static bool unchanged(struct MHD_Connection *c, const char *etag)
{
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    return inm && (strstr(inm, etag) || !strcmp(inm, "*"));
}

enum MHD_Result aw__serve_static(aw_server *s, struct MHD_Connection *c, const aw__static_file *f)
{
    (void)s;
    bool same = unchanged(c, f->etag);
    /* the bytes are the program's own: no copy, never freed */
    struct MHD_Response *r =
        MHD_create_response_from_buffer(same ? 0 : f->len, same ? (void *)"" : (void *)f->data, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "ETag", f->etag);
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    if (!same)
        MHD_add_response_header(r, "Content-Type", type_of(f->name));
    return aw__reply(c, same ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, r);
}
