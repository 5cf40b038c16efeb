//! The integration tests of `ogp-proto`, in one binary: a module per area (each was a
//! binary of its own, compiled and linked on its own). A new test file goes here as a
//! module: `cargo test -p ogp-proto --test protocols MODULE::`.

mod a2s_captures;
mod a2s_props;
mod a2s_responder;
mod addr_registry;
mod answer_cache;
mod ase_captures;
mod bedrock_captures;
mod bedrock_props;
mod cube2_captures;
mod doom3_captures;
mod doom_captures;
mod doomsday;
mod fivem_documents;
mod games;
mod gamespy1_captures;
mod gamespy2_captures;
mod gqp;
mod gqp_props;
mod gs2_ase_props;
mod gs3_captures;
mod gs3_props;
mod gs3_responder;
mod json_writer;
mod minecraft_client;
mod minetest_captures;
mod model;
mod netquake_captures;
mod ogp_captures;
mod ogp_draft;
mod ogp_props;
mod ogp_responder;
mod quake1_captures;
mod quake3_captures;
mod quake3_props;
mod quake3_responder;
mod qwmaster;
mod samp_captures;
mod spoofed_victim;
mod stats;
mod teeworlds_captures;
mod transmit_allocs;
mod unreal2_captures;
mod unreal2_props;
mod wide_values;
