/* first_request_floor URL — the least a C program on this machine's libcurl
 * does before a model API has its first request: start (the dynamic loader
 * mapping libcurl and the ~30 libraries it needs), curl_global_init, one
 * POST of a small Chat Completions body, exit. bench/run_runtime.sh runs it
 * like the runtimes, against the same stub, so that agentwire's time to
 * its first request can be read against what loading libcurl alone costs.
 * Linked with libcurl only (not the agentwire libraries). */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return size * n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: first_request_floor URL\n");
        return 2;
    }
    static const char body[] = "{\"model\":\"stub-model\",\"stream\":true,\"messages\":"
                               "[{\"role\":\"user\",\"content\":\"task\"}]}";
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    CURL *e = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    if (!e || !h)
        return 1;
    curl_easy_setopt(e, CURLOPT_URL, argv[1]);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    CURLcode rc = curl_easy_perform(e);
    curl_slist_free_all(h);
    curl_easy_cleanup(e);
    curl_global_cleanup();
    if (rc != CURLE_OK) {
        fprintf(stderr, "first_request_floor: %s\n", curl_easy_strerror(rc));
        return 1;
    }
    return 0;
}
