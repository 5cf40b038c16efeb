// example.cpp: the C++ wrapper (ogp.hpp) in managed mode, and ogp::query against itself.
//
//   ./example [--bind 127.0.0.1] [--port 0] [--serve]
//
// Serves a status with three players, queries itself over A2S and OGP, prints both
// results' host names and player counts, and exits 0 when they are right. With --serve
// it then prints "ready PORT" and "status JSON" (what it serves) and goes on serving
// until SIGTERM or SIGINT, for other query clients (crates/ogp-ffi/tests/peers.rs).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include <time.h>

#include "ogp.hpp"

static volatile std::sig_atomic_t stop_requested = 0;

extern "C" void on_signal(int) { stop_requested = 1; }

int main(int argc, char **argv) {
    std::string bind = "127.0.0.1", port = "0";
    bool serve = false;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--serve") == 0) serve = true;
        else if (i + 1 < argc && std::strcmp(argv[i], "--bind") == 0) bind = argv[++i];
        else if (i + 1 < argc && std::strcmp(argv[i], "--port") == 0) port = argv[++i];
    }
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    try {
        ogp::Config cfg;
        std::string listen = bind + ":" + port;
        cfg.raw().listen = listen.c_str();
        ogp::Responder server = ogp::Responder::start(cfg);

        ogp::Status status;
        status.host_name("C++ example server").game_name("Example").map("cp_badlands").slot_max(24);
        status.rule("sv_cheats", "0");
        for (int i = 0; i < 3; i++) {
            status.add_player("player" + std::to_string(i + 1), 10 * i, 40, 120);
        }
        server.publish(status);

        std::string target = bind + ":" + std::to_string(server.local_port());
        bool ok = true;
        for (int protocol : {OGP_PROTO_A2S, OGP_PROTO_OGP}) {
            std::string json = ogp::query(target, protocol);
            bool right = json.find("\"ok\":true") != std::string::npos &&
                         json.find("\"host_name\":\"C++ example server\"") != std::string::npos &&
                         json.find("player3") != std::string::npos;
            std::printf("%s %s\n", right ? "ok" : "WRONG", json.c_str());
            ok = ok && right;
        }
        if (!ok) return 1;
        if (serve) {
            std::printf("ready %d\nstatus %s\n", server.local_port(), status.json().c_str());
            std::fflush(stdout);
            while (!stop_requested) {
                timespec ts{0, 20 * 1000 * 1000};
                nanosleep(&ts, nullptr);
            }
        }
        return 0;
    } catch (const ogp::Error &e) {
        std::fprintf(stderr, "example: %s (%d)\n", e.what(), e.code());
        return 1;
    }
}
