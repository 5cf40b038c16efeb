//! The fuzz targets: one module a target, each with `run(data: &[u8])`, its input
//! format and what it asserts in its module docs. Compiled into this library so that the
//! libFuzzer binary (`ogp_fuzz.rs`, built instrumented by `scripts/fuzz.sh`) and the
//! workspace's corpus replay (`fuzz/tests/corpora.rs`, in the test command) run the same
//! code.

mod a2s_reply;
mod a2s_request;
mod a2s_split;
mod ase_datagram;
mod battlefield_stream;
mod beammp_stream;
mod bedrock_datagram;
mod client_machines;
mod cube2_datagram;
mod cube2_master_stream;
mod doom3_datagram;
mod doom_datagram;
mod doomsday_datagram;
mod dpmaster_page;
mod dpmaster_request;
mod fivem_http;
mod gqp_query;
mod gqp_reply;
mod gs1_datagram;
mod gs2_datagram;
mod gs3_datagram;
mod http_games;
mod http_response;
mod master_registry;
mod minecraft_stream;
mod minetest_datagram;
mod mumble_datagram;
mod nadeo_stream;
mod ogp_answer_body;
mod ogp_datagram;
mod ogp_draft_datagram;
mod ogp_query_body;
mod ogp_split;
mod oneshot_datagram;
mod openttd_stream;
mod quake3_datagram;
mod quakeworld_datagram;
mod qwmaster_datagram;
mod responder;
mod samp_datagram;
mod starmade_stream;
mod state_json;
mod teamspeak2_stream;
mod teamspeak3_stream;
mod teemaster;
mod teemaster7;
mod teeworlds_datagram;
mod tibia_stream;
mod unreal2_datagram;
mod valve_master;
mod weblist_json;

/// A target's entry point: one input.
pub type Target = fn(&[u8]);

/// Every target by name, in the order of `scripts/fuzz.sh list`.
pub const TARGETS: &[(&str, Target)] = &[
    ("ogp_datagram", ogp_datagram::run),
    ("ogp_answer_body", ogp_answer_body::run),
    ("ogp_query_body", ogp_query_body::run),
    ("ogp_split", ogp_split::run),
    ("state_json", state_json::run),
    ("gqp_query", gqp_query::run),
    ("gqp_reply", gqp_reply::run),
    ("ogp_draft_datagram", ogp_draft_datagram::run),
    ("responder", responder::run),
    ("client_machines", client_machines::run),
    ("gs3_datagram", gs3_datagram::run),
    ("a2s_reply", a2s_reply::run),
    ("a2s_split", a2s_split::run),
    ("a2s_request", a2s_request::run),
    ("valve_master", valve_master::run),
    ("master_registry", master_registry::run),
    ("quake3_datagram", quake3_datagram::run),
    ("bedrock_datagram", bedrock_datagram::run),
    ("dpmaster_request", dpmaster_request::run),
    ("dpmaster_page", dpmaster_page::run),
    ("minecraft_stream", minecraft_stream::run),
    ("gs1_datagram", gs1_datagram::run),
    ("unreal2_datagram", unreal2_datagram::run),
    ("gs2_datagram", gs2_datagram::run),
    ("ase_datagram", ase_datagram::run),
    ("teeworlds_datagram", teeworlds_datagram::run),
    ("openttd_stream", openttd_stream::run),
    ("doom3_datagram", doom3_datagram::run),
    ("minetest_datagram", minetest_datagram::run),
    ("mumble_datagram", mumble_datagram::run),
    ("doom_datagram", doom_datagram::run),
    ("samp_datagram", samp_datagram::run),
    ("cube2_datagram", cube2_datagram::run),
    ("quakeworld_datagram", quakeworld_datagram::run),
    ("qwmaster_datagram", qwmaster_datagram::run),
    ("teemaster", teemaster::run),
    ("cube2_master_stream", cube2_master_stream::run),
    ("teemaster7", teemaster7::run),
    ("http_response", http_response::run),
    ("doomsday_datagram", doomsday_datagram::run),
    ("fivem_http", fivem_http::run),
    ("battlefield_stream", battlefield_stream::run),
    ("teamspeak3_stream", teamspeak3_stream::run),
    ("teamspeak2_stream", teamspeak2_stream::run),
    ("weblist_json", weblist_json::run),
    ("oneshot_datagram", oneshot_datagram::run),
    ("http_games", http_games::run),
    ("beammp_stream", beammp_stream::run),
    ("starmade_stream", starmade_stream::run),
    ("nadeo_stream", nadeo_stream::run),
    ("tibia_stream", tibia_stream::run),
];
