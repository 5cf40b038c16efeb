/*
 * query.c: query one game server from C and print the result JSON (docs/json.md).
 *
 *   ./query HOST:PORT [auto|ogp|a2s|gamespy3|gqp|ogp-draft] [TIMEOUT_MS]
 *
 * Exit code 0 for an answer, 1 for a failed query (the JSON says why), 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ogp.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s HOST:PORT [auto|ogp|a2s|gamespy3|gqp|ogp-draft] [TIMEOUT_MS]\n", argv[0]);
        return 2;
    }
    static const struct { const char *name; int value; } protocols[] = {
        {"auto", OGP_PROTO_AUTO}, {"ogp", OGP_PROTO_OGP}, {"a2s", OGP_PROTO_A2S},
        {"gamespy3", OGP_PROTO_GAMESPY3}, {"gqp", OGP_PROTO_GQP}, {"ogp-draft", OGP_PROTO_OGP_DRAFT},
    };
    int protocol = OGP_PROTO_AUTO;
    if (argc > 2) {
        size_t i = 0;
        while (i < sizeof protocols / sizeof protocols[0] && strcmp(protocols[i].name, argv[2]) != 0) i++;
        if (i == sizeof protocols / sizeof protocols[0]) {
            fprintf(stderr, "unknown protocol %s\n", argv[2]);
            return 2;
        }
        protocol = protocols[i].value;
    }
    unsigned long timeout = argc > 3 ? strtoul(argv[3], NULL, 10) : 3000;

    char *json = NULL;
    size_t len = 0;
    int rc = ogp_query(argv[1], protocol, (uint32_t)timeout, &json, &len);
    if (json == NULL) { /* bad arguments: no result */
        fprintf(stderr, "ogp_query: %s\n", ogp_last_error_message());
        return 2;
    }
    printf("%s\n", json);
    ogp_string_free(json);
    return rc == OGP_OK ? 0 : 1;
}
