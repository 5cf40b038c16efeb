//! The A2S responder (sans-IO).
