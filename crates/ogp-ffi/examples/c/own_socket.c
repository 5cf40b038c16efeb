/*
 * own_socket.c: a game that keeps its own UDP socket and socket loop (poll()), and hands
 * each datagram to the ogp responder, which calls back to send the answers. The
 * responder opens no socket and starts no thread.
 *
 *   ./own_socket --port 27015 [--bind 0.0.0.0] [--tick-ms 1000] [--ticks N]
 *
 * Port 0 picks a free port. Prints "ready PORT" once answering; serves until SIGTERM or
 * SIGINT, then exits 0. With --ticks N the game ends after N ticks: it prints
 * "status JSON", the status it keeps serving from then on, for query clients to be
 * compared with (crates/ogp-ffi/tests/peers.rs).
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ogp.h"

static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

static int check(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "own_socket: %s: error %d: %s\n", what, rc, ogp_last_error_message());
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

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The responder's send callback: `user` is the game's socket. */
static int send_datagram(void *user, const struct sockaddr *to, socklen_t to_len,
                         const uint8_t *data, size_t len) {
    int fd = *(const int *)user;
    return sendto(fd, data, len, 0, to, to_len) < 0 ? -1 : 0;
}

static void update_status(ogp_status *status, unsigned tick) {
    /* 1 to 4 players, each a point more every tick. */
    int count = 1 + (int)(tick % 4);
    check(ogp_status_clear_players(status), "clear players");
    for (int i = 0; i < count; i++) {
        char name[32];
        int n = snprintf(name, sizeof name, "bot%d", i + 1);
        int index = check(ogp_status_add_player(status, name, (size_t)n, (int)tick + i, 10, tick), "add player");
        check(ogp_status_set_player_bot(status, index, 1), "bot");
    }
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

    /* The game's own socket. */
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("socket");
        return 1;
    }
    struct sockaddr_in local;
    memset(&local, 0, sizeof local);
    local.sin_family = AF_INET;
    local.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, bind_addr, &local.sin_addr) != 1) {
        fprintf(stderr, "own_socket: %s is not an IPv4 address\n", bind_addr);
        return 2;
    }
    if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) {
        perror("bind");
        return 1;
    }
    socklen_t local_len = sizeof local;
    getsockname(fd, (struct sockaddr *)&local, &local_len);

    /* The responder: no socket, no thread. */
    ogp_config cfg;
    ogp_config_init(&cfg);
    ogp_responder *responder = NULL;
    check(ogp_responder_new(&cfg, &responder), "ogp_responder_new");
    check(ogp_responder_add_listener(responder, (struct sockaddr *)&local, local_len, now_ms()), "add listener");

    ogp_status *status = ogp_status_new();
    check(ogp_status_set_host_name(status, "C own-socket server", 19), "host name");
    check(ogp_status_set_game_name(status, "Example", 7), "game name");
    check(ogp_status_set_map(status, "ctf_docks", 9), "map");
    check(ogp_status_set_slot_max(status, 16), "slot max");
    check(ogp_status_set_rule(status, "mp_fraglimit", 12, "30", 2), "rule");
    long tick = 0;
    update_status(status, (unsigned)tick);
    check(ogp_responder_publish(responder, status), "publish");

    printf("ready %d\n", ntohs(local.sin_port));
    fflush(stdout);

    uint64_t next_tick = now_ms() + (uint64_t)tick_ms;
    uint8_t buf[2048];
    while (!stop_requested) {
        /* Timed sends (GameSpy v3 heartbeats, when masters are configured). */
        uint32_t wait = OGP_WAIT_NONE;
        check(ogp_responder_poll(responder, now_ms(), send_datagram, &fd, &wait), "poll");
        uint64_t now = now_ms();
        uint64_t until_tick = next_tick > now ? next_tick - now : 0;
        int timeout = (int)(wait < until_tick ? wait : until_tick);

        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, timeout);
        if (ready < 0 && errno != EINTR) {
            perror("poll");
            break;
        }
        if (ready > 0 && (pfd.revents & POLLIN)) {
            struct sockaddr_storage from;
            socklen_t from_len = sizeof from;
            ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &from_len);
            if (n >= 0) {
                /* Answers go out through send_datagram before this returns. */
                check(ogp_responder_handle(responder, (struct sockaddr *)&from, from_len, buf, (size_t)n,
                                           now_ms(), send_datagram, &fd),
                      "handle");
            }
        }
        if (now_ms() >= next_tick) {
            tick++;
            next_tick += (uint64_t)tick_ms;
            if (ticks < 0 || tick < ticks) {
                update_status(status, (unsigned)tick);
                check(ogp_responder_publish(responder, status), "publish");
            } else if (tick == ticks) {
                /* --ticks: the game is over; its last status stays published until the end. */
                print_status(status);
            }
        }
    }

    ogp_stats stats;
    check(ogp_responder_stats(responder, &stats, sizeof stats), "stats");
    fprintf(stderr, "own_socket: stopping after %llu answers\n", (unsigned long long)stats.sent);
    ogp_status_free(status);
    check(ogp_responder_stop(responder), "ogp_responder_stop");
    close(fd);
    return 0;
}
