//! The stream tags that carry framing between blocks: how a framer tells a
//! decoder where its units are, and how the decoder reports on each one.

use crate::codes::framing::Mark;
use futuresdr::runtime::dev::{ItemTag, Tag};

/// `NamedUsize` tag at the first item of a unit: it and the units after it
/// (until the next such tag) hold this many items. A framer sets it on its
/// first unit and wherever the length changes; a burst detector can set it on
/// every packet, as GNU Radio's `packet_len`.
pub const UNIT_LLRS_TAG: &str = "gpufec.unit_llrs";

/// `NamedUsize` tag beside a [`UNIT_LLRS_TAG`]: the decoder format of the units
/// from there on (0 when absent).
pub const UNIT_FORMAT_TAG: &str = "gpufec.unit_format";

/// `NamedUsize` tag at the first item of a padded unit (the last one of a
/// tiled stream): how many of its decoded bits are real. The decoder drops
/// the rest, so that no bit is lost or invented at the end of a stream.
pub const VALID_BITS_TAG: &str = "gpufec.valid_bits";

/// `NamedAny` tag a decoder block puts on the first bit of each unit when
/// asked: the unit's [`UnitReport`](crate::codes::decode::UnitReport).
pub const UNIT_REPORT_TAG: &str = "gpufec.unit_report";

/// The framing marks among the tags of the first `n` items of a piece
/// (indices relative to it), and the other tags, which pass through.
pub(crate) fn split_tags(tags: &[ItemTag], n: usize) -> (Vec<Mark>, Vec<(usize, Tag)>) {
    let mut marks: Vec<Mark> = Vec::new();
    let mut passing = Vec::new();
    for t in tags.iter().filter(|t| t.index < n) {
        let mark_at = |marks: &mut Vec<Mark>| -> usize {
            match marks.iter().position(|m| m.at == t.index) {
                Some(i) => i,
                None => {
                    marks.push(Mark { at: t.index, len: None, format: None, valid_bits: None });
                    marks.len() - 1
                }
            }
        };
        match &t.tag {
            Tag::NamedUsize(name, v) if name == UNIT_LLRS_TAG => {
                let i = mark_at(&mut marks);
                marks[i].len = Some(*v);
            }
            Tag::NamedUsize(name, v) if name == UNIT_FORMAT_TAG => {
                let i = mark_at(&mut marks);
                marks[i].format = Some(u16::try_from(*v).unwrap_or(u16::MAX));
            }
            Tag::NamedUsize(name, v) if name == VALID_BITS_TAG => {
                let i = mark_at(&mut marks);
                marks[i].valid_bits = Some(*v);
            }
            other => passing.push((t.index, other.clone())),
        }
    }
    marks.sort_by_key(|m| m.at);
    (marks, passing)
}
