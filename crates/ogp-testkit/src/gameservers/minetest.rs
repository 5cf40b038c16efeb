//! Minetest / Luanti (`minetest-server`) on loopback (issue #38): not yet.
