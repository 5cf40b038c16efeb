//! ogp-cli's integration tests in one binary (one build and link instead of one per
//! file): each module is what was a test file of its own, and `scripts/run-tests.py`
//! still runs each module in a process of its own (`--exact` with its tests' names), so
//! that a module's tests share a process only with each other, as before.
//!
//! The modules that need the master (`ogp master`) are built with the `master` feature
//! (the test command builds every test with it).

#[macro_use]
mod common;
mod answer_size_warning;
mod auto_detect_cost;
mod bedrock_cli;
mod cli;
mod cli_flags;
mod complete_answers;
mod fivem_cli;
mod fivem_hostile;
mod games_cli;
mod gs2_ase_cli;
mod gs3_cli;
mod hostile_output;
mod http_games;
#[cfg(feature = "master")]
mod http_hardening;
mod interop_a2s;
mod interop_doom3;
mod interop_gs1;
mod interop_gs2_ase;
mod interop_gs3;
mod interop_minecraft;
mod interop_quake3;
mod interop_samp;
mod interop_tcpfam;
mod interop_unreal2;
mod json_escapes;
mod json_results;
mod json_rules;
mod list_hostile;
mod list_web;
#[cfg(feature = "master")]
mod master;
#[cfg(feature = "master")]
mod master_added;
#[cfg(feature = "master")]
mod master_addresses;
#[cfg(feature = "master")]
mod master_discovery;
#[cfg(feature = "master")]
mod master_gs1;
#[cfg(feature = "master")]
mod master_http_bytes;
#[cfg(feature = "master")]
mod master_http_caps;
#[cfg(feature = "master")]
mod master_http_idle;
#[cfg(feature = "master")]
mod master_probe_queue;
#[cfg(feature = "master")]
mod master_quake3;
#[cfg(feature = "master")]
mod master_registrations;
#[cfg(feature = "master")]
mod master_valve;
mod metrics;
mod minecraft_hostile;
mod minecraft_query_cli;
mod newcomer;
mod quake3_cli;
mod real_cube2;
mod real_doom;
mod real_minetest;
mod real_mumble;
mod real_openttd;
mod real_quakeworld;
mod real_teeworlds;
mod scan_cli;
mod scan_memory;
mod serve_state;
mod serve_switches;
#[cfg(feature = "master")]
mod simulated;
mod spoofed_victim;
mod tcp_games;
mod udp_oneshot;
mod uplink;
