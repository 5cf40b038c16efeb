//! Chocolate Doom (`chocolate-server`) on loopback (issue #38): not yet.
