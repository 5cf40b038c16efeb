//! The GameSpy v3 responder (in progress).
