// ogp.hpp: a header-only C++17 wrapper of the ogp C API (ogp.h): RAII owners, errors as
// exceptions, std::string_view for strings.
//
//   ogp::Config cfg;                       // ogp_config_init
//   cfg.raw().listen = "0.0.0.0:27015";
//   ogp::Responder server = ogp::Responder::start(cfg);
//   ogp::Status status;
//   status.host_name("My server").map("dm_arena").slot_max(16);
//   status.add_player("alice", 12, 35, 300);
//   server.publish(status);                // any thread, any time
//   // ~Responder stops and frees; ~Status frees.
//
// Exceptions are thrown on the calling side only: no exception ever crosses the C
// library (the send callback of handle() catches and drops them).
#ifndef OGP_HPP
#define OGP_HPP

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "ogp.h"

namespace ogp {

// An error code of the C API and its message.
class Error : public std::runtime_error {
  public:
    Error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}
    int code() const noexcept { return code_; }

  private:
    int code_;
};

// Throws when `rc` is an error code; returns it otherwise (an index, a count, a port).
inline int check(int rc, const char *call) {
    if (rc < 0) {
        throw Error(rc, std::string(call) + ": " + ogp_last_error_message());
    }
    return rc;
}

// ogp_config with its defaults.
class Config {
  public:
    Config() { check(ogp_config_init(&cfg_), "ogp_config_init"); }
    ogp_config &raw() noexcept { return cfg_; }
    const ogp_config &raw() const noexcept { return cfg_; }

  private:
    ogp_config cfg_{};
};

// An owned ogp_status; movable, not copyable.
class Status {
  public:
    Status() : s_(ogp_status_new()) {
        if (s_ == nullptr) throw Error(OGP_ERR_PANIC, "ogp_status_new failed");
    }
    ~Status() { ogp_status_free(s_); }
    Status(Status &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    Status &operator=(Status &&o) noexcept {
        if (this != &o) {
            ogp_status_free(s_);
            s_ = std::exchange(o.s_, nullptr);
        }
        return *this;
    }
    Status(const Status &) = delete;
    Status &operator=(const Status &) = delete;

    Status &host_name(std::string_view v) { return text(ogp_status_set_host_name, v, "ogp_status_set_host_name"); }
    Status &game_name(std::string_view v) { return text(ogp_status_set_game_name, v, "ogp_status_set_game_name"); }
    Status &game_version(std::string_view v) { return text(ogp_status_set_game_version, v, "ogp_status_set_game_version"); }
    Status &game_type(std::string_view v) { return text(ogp_status_set_game_type, v, "ogp_status_set_game_type"); }
    Status &game_mode(std::string_view v) { return text(ogp_status_set_game_mode, v, "ogp_status_set_game_mode"); }
    Status &map(std::string_view v) { return text(ogp_status_set_map, v, "ogp_status_set_map"); }
    Status &slot_max(int64_t n) { check(ogp_status_set_slot_max(s_, n), "ogp_status_set_slot_max"); return *this; }
    Status &password(bool p) { check(ogp_status_set_password(s_, p ? 1 : 0), "ogp_status_set_password"); return *this; }
    Status &rule(std::string_view key, std::string_view value) {
        check(ogp_status_set_rule(s_, key.data(), key.size(), value.data(), value.size()), "ogp_status_set_rule");
        return *this;
    }
    Status &clear_players() { check(ogp_status_clear_players(s_), "ogp_status_clear_players"); return *this; }
    // Returns the player's index.
    int add_player(std::string_view name, int32_t score, uint32_t ping_ms, uint32_t time_s) {
        return check(ogp_status_add_player(s_, name.data(), name.size(), score, ping_ms, time_s),
                     "ogp_status_add_player");
    }
    Status &json(std::string_view j) { check(ogp_status_set_json(s_, j.data(), j.size()), "ogp_status_set_json"); return *this; }
    // The status as JSON, the state-file schema (ogp_status_to_json).
    std::string json() {
        char *out = nullptr;
        size_t len = 0;
        check(ogp_status_to_json(s_, &out, &len), "ogp_status_to_json");
        std::string j(out, len);
        ogp_string_free(out);
        return j;
    }

    ogp_status *raw() const noexcept { return s_; }

  private:
    Status &text(int (*set)(ogp_status *, const char *, size_t), std::string_view v, const char *call) {
        // A view of nothing (data() == nullptr) would unset the field: pass "" instead.
        check(set(s_, v.data() != nullptr ? v.data() : "", v.size()), call);
        return *this;
    }
    ogp_status *s_;
};

// An owned responder; movable, not copyable. The destructor stops it.
class Responder {
  public:
    // Managed mode: its own sockets and thread.
    static Responder start(const Config &cfg) {
        ogp_responder *r = nullptr;
        check(ogp_responder_start(&cfg.raw(), &r), "ogp_responder_start");
        return Responder(r);
    }
    // Game-owned sockets: datagrams through handle().
    static Responder for_own_socket(const Config &cfg) {
        ogp_responder *r = nullptr;
        check(ogp_responder_new(&cfg.raw(), &r), "ogp_responder_new");
        return Responder(r);
    }
    ~Responder() { ogp_responder_stop(r_); }
    Responder(Responder &&o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
    Responder &operator=(Responder &&o) noexcept {
        if (this != &o) {
            ogp_responder_stop(r_);
            r_ = std::exchange(o.r_, nullptr);
        }
        return *this;
    }
    Responder(const Responder &) = delete;
    Responder &operator=(const Responder &) = delete;

    void publish(const Status &s) const { check(ogp_responder_publish(r_, s.raw()), "ogp_responder_publish"); }
    int local_port(size_t index = 0) const { return check(ogp_responder_local_port(r_, index), "ogp_responder_local_port"); }
    ogp_stats stats() const {
        ogp_stats st{};
        check(ogp_responder_stats(r_, &st, sizeof st), "ogp_responder_stats");
        return st;
    }

    using Send = std::function<void(const sockaddr *to, socklen_t to_len, const uint8_t *data, size_t len)>;

    // Game-owned mode: one received datagram; `send` is called for each reply. Returns
    // the number of replies.
    int handle(const sockaddr *from, socklen_t from_len, const uint8_t *data, size_t len, uint64_t now_ms,
               const Send &send) const {
        return check(ogp_responder_handle(r_, from, from_len, data, len, now_ms, &trampoline,
                                          const_cast<Send *>(&send)),
                     "ogp_responder_handle");
    }

    ogp_responder *raw() const noexcept { return r_; }

  private:
    explicit Responder(ogp_responder *r) : r_(r) {}
    static int trampoline(void *user, const sockaddr *to, socklen_t to_len, const uint8_t *data, size_t len) {
        try {
            (*static_cast<const Send *>(user))(to, to_len, data, len);
            return 0;
        } catch (...) {
            return -1;  // never unwind through the C library
        }
    }
    ogp_responder *r_;
};

// Queries a server; the result JSON (docs/json.md). Throws on bad arguments only: a
// failed query is a result with "ok": false.
inline std::string query(const std::string &target, int protocol = OGP_PROTO_AUTO, uint32_t timeout_ms = 3000) {
    char *json = nullptr;
    size_t len = 0;
    int rc = ogp_query(target.c_str(), protocol, timeout_ms, &json, &len);
    if (json == nullptr) check(rc, "ogp_query");
    std::string out(json, len);
    ogp_string_free(json);
    return out;
}

}  // namespace ogp

#endif
