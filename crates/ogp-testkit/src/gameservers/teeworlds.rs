//! Teeworlds 0.7 (`teeworlds-server`) and DDNet (`ddnet-server`) on loopback (issue #38): not yet.
