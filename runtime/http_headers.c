/* Reading a reply's headers and its URL: one header's value, Retry-After
 * in either form, the reason phrase of a status, whether a URL's host is
 * this machine. */
#include <curl/curl.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "internal/http.h"

static bool ascii_ieq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool aw_http_header_get(aw_text headers, const char *name, aw_text *value)
{
    size_t nlen = strlen(name), i = 0;
    while (i < headers.len) {
        const char *line = headers.ptr + i;
        const char *nl = memchr(line, '\n', headers.len - i);
        size_t len = nl ? (size_t)(nl - line) : headers.len - i;
        i += len + 1;
        if (len > nlen && line[nlen] == ':' && ascii_ieq(line, name, nlen)) {
            size_t b = nlen + 1, e = len;
            while (b < e && is_blank(line[b]))
                b++;
            while (e > b && is_blank(line[e - 1]))
                e--;
            value->ptr = line + b;
            value->len = e - b;
            return true;
        }
    }
    return false;
}

int64_t aw_http_parse_retry_after(aw_text v, int64_t now_wall_s)
{
    if (v.len == 0 || v.len > 64)
        return -1;
    size_t i = 0;
    int64_t secs = 0;
    while (i < v.len && v.ptr[i] >= '0' && v.ptr[i] <= '9') {
        if (secs < INT64_MAX / 10000)
            secs = secs * 10 + (v.ptr[i] - '0');
        i++;
    }
    if (i == v.len)
        return secs * 1000;
    /* An HTTP date, in any of the three forms curl_getdate reads. */
    char date[65];
    memcpy(date, v.ptr, v.len);
    date[v.len] = 0;
    time_t now = (time_t)now_wall_s;
    time_t t = curl_getdate(date, &now);
    if (t == (time_t)-1)
        return -1;
    return t <= now ? 0 : (int64_t)(t - now) * 1000;
}

bool aw_http_url_is_loopback(const char *url)
{
    CURLU *u = curl_url();
    char *host = NULL;
    bool loop = false;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        loop = strncmp(host, "127.", 4) == 0 || strcmp(host, "[::1]") == 0 || strcasecmp(host, "localhost") == 0;
    }
    curl_free(host);
    curl_url_cleanup(u);
    return loop;
}

const char *aw_http_reason(int status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 529: return "Overloaded";
    default: return "";
    }
}
