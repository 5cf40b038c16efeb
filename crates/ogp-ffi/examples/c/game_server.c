/*
 * game_server.c: a game embedding the ogp responder in managed mode.
 *
 * The library opens the UDP socket and answers OGP, A2S, GameSpy v3 and GQP queries on
 * a thread of its own; the game only publishes its status when it changes. Here a few
 * players join, score and leave every tick.
 *
 *   ./game_server --port 27015 [--bind 0.0.0.0] [--tick-ms 1000] [--ticks N]
 *
 * Port 0 picks a free port. Prints "ready PORT" once answering; serves until SIGTERM or
 * SIGINT, then exits 0. With --ticks N the game ends after N ticks: it prints
 * "status JSON", the status it keeps serving from then on, for query clients to be
 * compared with (crates/ogp-ffi/tests/peers.rs). Build (see docs/c-api.md):
 *
 *   cc -Iinclude game_server.c libogp.a -lpthread -ldl -lm -o game_server
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ogp.h"

static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

#define MAX_PLAYERS 8

struct player {
    char name[32];
    int score;
    unsigned joined_tick;
};

static int check(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "game_server: %s: error %d: %s\n", what, rc, ogp_last_error_message());
        exit(1);
    }
    return rc;
}

/* The status as JSON (the state-file schema) on one line: "status {...}". */
static void print_status(ogp_status *status) {
    char *json = NULL;
    check(ogp_status_to_json(status, &json, NULL), "status as JSON");
    printf("status %s\n", json);
    fflush(stdout);
    ogp_string_free(json);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    const char *bind_addr = "0.0.0.0";
    long port = 27015, tick_ms = 1000, ticks = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0) {
            port = strtol(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--bind") == 0) {
            bind_addr = argv[i + 1];
        } else if (strcmp(argv[i], "--tick-ms") == 0) {
            tick_ms = strtol(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--ticks") == 0) {
            ticks = strtol(argv[i + 1], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [--port P] [--bind ADDR] [--tick-ms MS] [--ticks N]\n", argv[0]);
            return 2;
        }
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    /* 1. Settings: defaults, then the address to answer on. */
    char listen[128];
    snprintf(listen, sizeof listen, "%s:%ld", bind_addr, port);
    ogp_config cfg;
    ogp_config_init(&cfg);
    cfg.listen = listen;

    /* 2. Start answering (its own socket and thread). */
    ogp_responder *responder = NULL;
    check(ogp_responder_start(&cfg, &responder), "ogp_responder_start");

    /* 3. The status: built once, changed and published each tick. */
    ogp_status *status = ogp_status_new();
    const char *host = "C example server";
    check(ogp_status_set_host_name(status, host, strlen(host)), "host name");
    check(ogp_status_set_game_name(status, "Example", 7), "game name");
    check(ogp_status_set_game_version(status, "1.0.3", 5), "game version");
    check(ogp_status_set_map(status, "dm_arena", 8), "map");
    check(ogp_status_set_game_type(status, "Deathmatch", 10), "game type");
    check(ogp_status_set_slot_max(status, MAX_PLAYERS), "slot max");
    check(ogp_status_set_password(status, 0), "password");
    check(ogp_status_set_rule(status, "sv_gravity", 10, "800", 3), "rule");
    check(ogp_status_set_rule(status, "mp_timelimit", 12, "20", 2), "rule");

    /* Published before "ready": a query that comes before the first tick gets this status,
     * not the responder's empty one. */
    check(ogp_responder_publish(responder, status), "publish");
    printf("ready %d\n", check(ogp_responder_local_port(responder, 0), "local port"));
    fflush(stdout);

    struct player players[MAX_PLAYERS];
    int count = 0;
    unsigned next_id = 1;
    for (long tick = 0; !stop_requested && (ticks < 0 || tick < ticks); tick++) {
        /* Someone joins on two ticks of three, the longest-playing leaves on the third. */
        if (tick % 3 != 2 && count < MAX_PLAYERS) {
            struct player *p = &players[count++];
            snprintf(p->name, sizeof p->name, "player%u", next_id++);
            p->score = 0;
            p->joined_tick = (unsigned)tick;
        } else if (count > 0) {
            memmove(&players[0], &players[1], (size_t)(count - 1) * sizeof players[0]);
            count--;
        }
        for (int i = 0; i < count; i++) {
            players[i].score += (int)((tick + i) % 3);
        }

        check(ogp_status_clear_players(status), "clear players");
        for (int i = 0; i < count; i++) {
            unsigned seconds = (unsigned)(((unsigned)tick - players[i].joined_tick) * (unsigned long)tick_ms / 1000);
            check(ogp_status_add_player(status, players[i].name, strlen(players[i].name),
                                        players[i].score, 20u + 5u * (unsigned)i, seconds),
                  "add player");
        }
        /* A copy goes to the responder, atomically; queries never wait for it. */
        check(ogp_responder_publish(responder, status), "publish");

        for (long waited = 0; waited < tick_ms && !stop_requested; waited += 20) {
            sleep_ms(20);
        }
    }
    if (!stop_requested) {
        /* --ticks: the game is over; its last status stays published until the end. */
        print_status(status);
        while (!stop_requested) {
            sleep_ms(20);
        }
    }

    ogp_stats stats;
    check(ogp_responder_stats(responder, &stats, sizeof stats), "stats");
    fprintf(stderr, "game_server: stopping after %llu answers\n", (unsigned long long)stats.sent);
    ogp_status_free(status);
    check(ogp_responder_stop(responder), "ogp_responder_stop");
    return 0;
}
