//! The caps on the model and the bounded deserializers its `deserialize_with`
//! attributes use: below both [`crate::model`] and [`crate::limits`] (which re-exports
//! the caps), so that neither imports the other back.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::text::Text;

/// Longest string, in bytes: every name, value and URL. An OGP answer longer than 8 KiB
/// unsplit is never sent, an A2S or GameSpy v3 packet holds 1,400 bytes, so a few KiB
/// is more than any client shows.
pub const MAX_STRING_BYTES: usize = 4096;

/// Most entries in one list: teams, players, rules, add-ons, limits. The OGP decoder's
/// own cap (`ogp::answer::MAX_LIST_ENTRIES`): a split answer of 255 packets of about
/// 1.4 KB carries about that many one-line entries at most.
pub const MAX_LIST_ENTRIES: usize = 4096;

/// Most `extra` values of one player or team: GameSpy v3's cap on the columns of a
/// player or team section (`gamespy3::reply::MAX_COLUMNS`).
pub const MAX_EXTRA_ENTRIES: usize = 128;

/// Most colour changes in one string's colour information (`name_color`,
/// `host_name_color`): at most one per byte of the longest string.
pub const MAX_COLOR_ENTRIES: usize = MAX_STRING_BYTES;

/// Most bytes of undecoded colour information kept for one string.
pub const MAX_UNDECODED_COLOR_BYTES: usize = MAX_STRING_BYTES;

/// Longest player address in bytes: a `sockaddr_storage`.
pub const MAX_ADDRESS_BYTES: usize = 128;

// Bounded deserialization, for the model's `deserialize_with`.

/// The error for a list or map that has `n` entries where `max` are allowed.
fn count_error<E: serde::de::Error>(n: usize, max: usize) -> E {
    E::custom(format_args!("{n} entries, at most {max}"))
}

/// Reads a sequence of at most `max` elements. Past the cap, the rest is skipped
/// without being kept (only counted, for the error).
pub(crate) fn bounded_seq<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(
    mut seq: A,
    max: usize,
) -> Result<Vec<T>, A::Error> {
    let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(max).min(256));
    while out.len() < max {
        match seq.next_element::<T>()? {
            Some(v) => out.push(v),
            None => return Ok(out),
        }
    }
    let mut n = max;
    while seq.next_element::<IgnoredAny>()?.is_some() {
        n = n.saturating_add(1);
    }
    if n > max {
        return Err(count_error(n, max));
    }
    Ok(out)
}

/// Reads the entries of a map, at most `max` of them, handing each to `push`. Past the
/// cap, the rest is skipped without being kept (only counted, for the error).
pub(crate) fn bounded_map<'de, A, K, V>(
    mut map: A,
    max: usize,
    mut push: impl FnMut(K, V),
) -> Result<(), A::Error>
where
    A: MapAccess<'de>,
    K: Deserialize<'de>,
    V: Deserialize<'de>,
{
    let mut kept = 0usize;
    while kept < max {
        match map.next_entry::<K, V>()? {
            Some((k, v)) => {
                push(k, v);
                kept += 1;
            }
            None => return Ok(()),
        }
    }
    let mut n = max;
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
        n = n.saturating_add(1);
    }
    if n > max {
        return Err(count_error(n, max));
    }
    Ok(())
}

struct SeqVisitor<T, const MAX: usize>(PhantomData<T>);

impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for SeqVisitor<T, MAX> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of at most {MAX} entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<T>, A::Error> {
        bounded_seq(seq, MAX)
    }
}

struct OptSeqVisitor<T, const MAX: usize>(PhantomData<T>);

impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for OptSeqVisitor<T, MAX> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of at most {MAX} entries")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(SeqVisitor::<T, MAX>(PhantomData))
            .map(Some)
    }
}

/// `deserialize_with` for a list of at most `MAX` entries.
pub(crate) fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>, const MAX: usize>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    d.deserialize_seq(SeqVisitor::<T, MAX>(PhantomData))
}

/// `deserialize_with` for an optional list of at most `MAX` entries (`null` is `None`).
pub(crate) fn opt_list<'de, D: Deserializer<'de>, T: Deserialize<'de>, const MAX: usize>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    d.deserialize_option(OptSeqVisitor::<T, MAX>(PhantomData))
}

/// `deserialize_with` for the `extra` maps: at most [`MAX_EXTRA_ENTRIES`] entries.
pub(crate) fn extra<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<Text, Text>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = BTreeMap<Text, Text>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(
                f,
                "a map of at most {MAX_EXTRA_ENTRIES} names to string values"
            )
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            bounded_map(map, MAX_EXTRA_ENTRIES, |k: Text, v: Text| {
                out.insert(k, v);
            })?;
            Ok(out)
        }
    }
    d.deserialize_map(V)
}
