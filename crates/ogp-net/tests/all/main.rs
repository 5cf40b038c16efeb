//! ogp-net's integration tests in one binary (one build and link instead of one per
//! file): each module is what was a test file of its own, and `scripts/run-tests.py`
//! runs each module in a process of its own.

mod a2s_replay;
mod e2e;
mod gs3_heartbeat;
mod gs3_query;
mod minecraft_srv;
mod scan;
mod scan_loss;
mod scan_minecraft;
mod threads;
