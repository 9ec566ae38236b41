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
    // Whether `marks` is still in ascending order (tags usually come that way).
    let mut ascending = true;
    let mut passing = Vec::new();
    for t in tags.iter().filter(|t| t.index < n) {
        let mut mark_at = |marks: &mut Vec<Mark>| -> usize {
            // In order, the mark is the last one or a new one: no search.
            let found = match marks.last() {
                Some(m) if m.at == t.index => Some(marks.len() - 1),
                Some(m) if ascending && m.at < t.index => None,
                None => None,
                _ => marks.iter().position(|m| m.at == t.index),
            };
            match found {
                Some(i) => i,
                None => {
                    ascending &= marks.last().is_none_or(|m| m.at < t.index);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn named(index: usize, name: &str, v: usize) -> ItemTag {
        ItemTag { index, tag: Tag::NamedUsize(name.to_string(), v) }
    }

    #[test]
    fn marks_merge_per_item_in_any_tag_order() {
        let tags = [
            named(5, UNIT_LLRS_TAG, 10),
            named(2, UNIT_LLRS_TAG, 3),
            named(5, UNIT_FORMAT_TAG, 1),
            ItemTag { index: 4, tag: Tag::Id(7) },
            named(2, VALID_BITS_TAG, 1),
            named(9, UNIT_LLRS_TAG, 4),
            named(9, VALID_BITS_TAG, 2),
            named(12, UNIT_LLRS_TAG, 4),
        ];
        let (marks, passing) = split_tags(&tags, 12);
        let got: Vec<_> = marks.iter().map(|m| (m.at, m.len, m.format, m.valid_bits)).collect();
        assert_eq!(got, vec![(2, Some(3), None, Some(1)), (5, Some(10), Some(1), None), (9, Some(4), None, Some(2))]);
        assert_eq!(passing.len(), 1);
        assert_eq!(passing[0].0, 4);
    }
}
