//! QuakeWorld (`mvdsv` + `ktx`) on loopback (issue #38): not yet.
