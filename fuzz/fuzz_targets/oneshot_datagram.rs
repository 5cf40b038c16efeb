//! The games of the core's one-request shape (`client_oneshot.rs`): CS2D, Satisfactory,
//! Savage 2, Mafia II Multiplayer and Online, Tribes 1 and Starsiege, rFactor, Armagetron
//! Advanced and Ventrilo (its packet, and the datagram read as a reply's text). Each
//! decoder and mapping on the same datagram, and each client machine fed it.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a CS2D or
//! Satisfactory reply read without a warning re-encodes to itself, an rFactor or
//! Armagetron one re-encodes to bytes that read the same, a Ventrilo packet of its exact
//! length re-encodes to itself (the others keep less
//! than they read: Tribes' values are paired and substituted, Mafia II's list ends at an
//! empty name, Savage 2's header is free); the status survives its JSON state file;
//! every machine fed the datagram ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error, check_warnings, same_through_json};
use ogp_proto::client::Timing;
use ogp_proto::{
    armagetron, cs2d, mafia2, mafia2online, rfactor, satisfactory, savage2, starsiege, tribes1,
    ventrilo, Status,
};

/// Checks one decoder's result: `encode` re-encodes a reply read without warnings.
fn check<R>(
    datagram: &[u8],
    got: Result<R, ogp_proto::DecodeError>,
    warnings: impl Fn(&R) -> &[ogp_proto::DecodeWarning],
    encode: Option<fn(&R, &mut Vec<u8>)>,
    status: impl Fn(&R) -> Status,
) {
    let len = datagram.len();
    match got {
        Ok(r) => {
            check_warnings(warnings(&r), 0, len);
            if let (true, Some(encode)) = (warnings(&r).is_empty(), encode) {
                let mut b = Vec::new();
                encode(&r, &mut b);
                assert_eq!(b, datagram, "re-encodes to itself");
            }
            same_through_json(&status(&r));
        }
        Err(e) => check_error(&e, 0, len),
    }
}

/// One input of the `oneshot_datagram` target.
pub fn run(datagram: &[u8]) {
    check(
        datagram,
        cs2d::decode_reply(datagram),
        |r| &r.warnings,
        Some(cs2d::Reply::encode),
        cs2d::client::reply_to_status,
    );
    check(
        datagram,
        satisfactory::decode_reply(datagram),
        |r| &r.warnings,
        Some(satisfactory::Reply::encode),
        satisfactory::client::reply_to_status,
    );
    for online in [false, true] {
        check(
            datagram,
            mafia2::decode_reply(datagram, online),
            |r| &r.warnings,
            None,
            mafia2::client::reply_to_status,
        );
    }
    for kind in [tribes1::TRIBES, tribes1::STARSIEGE] {
        check(
            datagram,
            tribes1::decode_reply(datagram, kind),
            |r| &r.warnings,
            None,
            tribes1::client::reply_to_status,
        );
    }
    match savage2::decode_reply(datagram) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, datagram.len());
            same_through_json(&savage2::client::reply_to_status(&r));
        }
        Err(e) => check_error(&e, 0, datagram.len()),
    }
    // rFactor and Armagetron: a reply read without a warning, re-encoded, reads the same
    // (their bytes may differ: padding after a NUL, pad bytes, empty names are free)
    match rfactor::decode_reply(datagram) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, datagram.len());
            if r.warnings.is_empty() {
                let mut b = Vec::new();
                r.encode(&mut b);
                assert_eq!(rfactor::decode_reply(&b).as_ref(), Ok(&r), "reads the same");
            }
            same_through_json(&rfactor::client::reply_to_status(&r));
        }
        Err(e) => check_error(&e, 0, datagram.len()),
    }
    match armagetron::decode_reply(datagram) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, datagram.len());
            if r.warnings.is_empty() {
                let mut b = Vec::new();
                r.encode(&mut b);
                assert_eq!(
                    armagetron::decode_reply(&b).as_ref(),
                    Ok(&r),
                    "reads the same"
                );
            }
            same_through_json(&armagetron::client::reply_to_status(&r));
        }
        Err(e) => check_error(&e, 0, datagram.len()),
    }
    match ventrilo::decode_packet(datagram) {
        Ok(p) => {
            if datagram.len() == ventrilo::HEADER_LEN + p.body.len() {
                let mut b = Vec::new();
                p.encode(&mut b);
                assert_eq!(b, datagram, "a packet re-encodes to itself");
            }
        }
        Err(e) => check_error(&e, 0, datagram.len()),
    }
    let text = ventrilo::decode_text(datagram);
    check_warnings(&text.warnings, 0, datagram.len());
    same_through_json(&ventrilo::client::reply_to_status(&text));
    let now = Instant::now();
    let t = || Timing::default().retries(0);
    answer_every_send(
        &mut cs2d::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut satisfactory::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut savage2::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut mafia2::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut mafia2online::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut tribes1::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut starsiege::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut rfactor::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut armagetron::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
    answer_every_send(
        &mut ventrilo::client::QueryMachine::new(Default::default(), t(), 1, now),
        datagram,
    );
}
