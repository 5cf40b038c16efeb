//! The A2S client (sans-IO).
