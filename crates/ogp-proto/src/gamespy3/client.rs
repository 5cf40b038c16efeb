//! The GameSpy v3 client (in progress).
