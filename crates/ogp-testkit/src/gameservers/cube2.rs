//! Cube 2: Sauerbraten (`cube2-server`) and Red Eclipse (server and master) on loopback (issue #38): not yet.
