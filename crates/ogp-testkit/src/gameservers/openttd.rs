//! OpenTTD (`openttd`) on loopback (issue #38): not yet.
