//! Mumble (`mumble-server`) on loopback (issue #38): not yet.
