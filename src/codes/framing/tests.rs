//! Cutters: the same units in any chunking, positions of their own items,
//! marks, the end of a stream, and learning from the decoder.

use super::*;

/// Cut `items` with `cutter` in pieces of `chunk` (marks given at stream positions).
fn cut_all<T: Copy + Send>(cutter: &mut dyn Cutter<T>, items: &[T], marks: &[(usize, Mark)], chunk: usize) -> CodeResult<Cut<T>> {
    let mut out = Cut::default();
    for (i, piece) in items.chunks(chunk).enumerate() {
        let at = i * chunk;
        let here: Vec<Mark> =
            marks.iter().filter(|(p, _)| (at..at + piece.len()).contains(p)).map(|(p, m)| Mark { at: p - at, ..*m }).collect();
        cutter.cut(piece, &here, &mut out)?;
    }
    cutter.end(&mut out)?;
    Ok(out)
}

#[test]
fn fixed_blocks_in_any_chunking_know_where_they_came_from() {
    let items: Vec<u16> = (0..100).collect();
    for chunk in [1, 7, 10, 33, 100] {
        let out = cut_all(&mut BlockCutter::fixed(10).unwrap(), &items, &[], chunk).unwrap();
        assert_eq!(out.items, items);
        assert_eq!(out.units.len(), 10);
        for (u, unit) in out.units.iter().enumerate() {
            assert_eq!((unit.span.start, unit.span.len, unit.origin, unit.own), (u * 10, 10, u as u64 * 10, Some(10)), "chunk {chunk}");
        }
    }
    let e = cut_all(&mut BlockCutter::fixed(30).unwrap(), &items, &[], 7).unwrap_err().to_string();
    assert!(e.contains("ended inside a code block (10 of 30 LLRs present)"), "{e}");
    let e = cut_all(&mut BlockCutter::<u16>::fixed(30).unwrap().counting("symbols"), &items, &[], 7).unwrap_err().to_string();
    assert!(e.contains("(10 of 30 symbols present)"), "{e}");
    assert!(BlockCutter::<u16>::fixed(MAX_UNIT_ITEMS + 1).is_err());
}

#[test]
fn marks_set_lengths_formats_and_padding() {
    let items: Vec<u16> = (0..26).collect();
    let m = |len, format, valid| Mark { at: 0, len, format, valid_bits: valid };
    let marks = [(0, m(Some(4), None, None)), (8, m(Some(6), Some(1), None)), (20, m(None, None, Some(3)))];
    for chunk in [1, 5, 26] {
        let out = cut_all(&mut BlockCutter::marked(None, 64).unwrap(), &items, &marks, chunk).unwrap();
        let got: Vec<(usize, u16, Option<usize>)> = out.units.iter().map(|u| (u.span.len, u.span.format, u.valid_bits)).collect();
        assert_eq!(got, [(4, 0, None), (4, 0, None), (6, 1, None), (6, 1, None), (6, 1, Some(3))], "chunk {chunk}");
        assert_eq!(out.units[4].origin, 20);
    }
    // A mark inside a unit, items before any mark, and a mark of no length.
    let e = cut_all(&mut BlockCutter::marked(None, 64).unwrap(), &items, &[(0, m(Some(4), None, None)), (6, m(Some(4), None, None))], 3);
    assert!(e.unwrap_err().to_string().contains("cuts the unit before it short (2 of 4"));
    let e = cut_all(&mut BlockCutter::<u16>::marked(None, 64).unwrap(), &items, &[], 3).unwrap_err().to_string();
    assert!(e.contains("before the first unit mark"), "{e}");
    assert!(cut_all(&mut BlockCutter::marked(None, 64).unwrap(), &items, &[(0, m(Some(0), None, None))], 3).is_err());
    assert!(cut_all(&mut BlockCutter::marked(None, 8).unwrap(), &items, &[(0, m(Some(9), None, None))], 3).is_err(), "longer than its maximum");
    // With an initial length, unmarked blocks are cut; marks are ignored by a fixed cutter.
    let out = cut_all(&mut BlockCutter::marked(Some((13, 0)), 64).unwrap(), &items, &[], 4).unwrap();
    assert_eq!(out.units.len(), 2);
    let out = cut_all(&mut BlockCutter::fixed(13).unwrap(), &items, &marks, 4).unwrap();
    assert_eq!(out.units.len(), 2);
}

#[test]
fn a_window_cutter_starts_each_window_where_the_decoder_found_the_last_one_ended() {
    let items: Vec<u16> = (0..50).collect();
    let mut w = WindowCutter::new(8).unwrap();
    let mut out = Cut::default();
    w.cut(&items[..5], &[], &mut out).unwrap();
    assert!(out.units.is_empty() && !w.awaiting(), "a window waits for its 8 items");
    w.cut(&items[5..], &[], &mut out).unwrap();
    assert_eq!(out.units.len(), 1);
    assert!(w.learns() && w.awaiting());
    w.cut(&[], &[], &mut out).unwrap();
    assert_eq!(out.units.len(), 1, "no second window before the decoder reports");
    let mut consumed = Vec::new();
    for c in [6, 8, 7, 5, 3, 9] {
        if !w.awaiting() {
            break;
        }
        let c = c.min(out.units.last().unwrap().span.len);
        w.learn(c, &mut out).unwrap();
        consumed.push(c);
        if !w.awaiting() {
            w.end(&mut out).unwrap();
        }
    }
    // Windows start where the consumed items end, and hold the stream's items.
    let mut at = 0u64;
    for (u, c) in out.units.iter().zip(consumed.iter().chain([&0])) {
        assert_eq!(u.origin, at);
        assert_eq!(out.items[u.span.start], at as u16);
        at += *c as u64;
    }
    // The last window is what was left: items 41..50.
    assert_eq!(out.units.last().unwrap().span.len, 8.min(50 - out.units.last().unwrap().origin as usize));
    assert!(w.learn(0, &mut out).unwrap_err().to_string().contains("consume 1..="));
    let mut fresh = WindowCutter::<u16>::new(4).unwrap();
    assert!(fresh.learn(1, &mut Cut::default()).is_err(), "nothing was cut");
    assert!(WindowCutter::<u16>::new(0).is_err());
}


#[test]
fn a_window_cutter_leaves_a_short_rest_at_the_end_undecoded() {
    let items: Vec<u16> = (0..10).collect();
    let cut_rest = |leftover: usize| {
        let mut w = WindowCutter::new(8).unwrap().with_leftover(leftover);
        let mut out = Cut::default();
        w.cut(&items, &[], &mut out).unwrap();
        w.end(&mut out).unwrap();
        // The first frame ends one item short of the window: 7 + 3 items are left.
        w.learn(7, &mut out).unwrap();
        (out.units.len(), w.awaiting())
    };
    assert_eq!(cut_rest(0), (2, true), "without a leftover, the rest is a window");
    assert_eq!(cut_rest(2), (2, true), "3 items are more than a leftover of 2");
    assert_eq!(cut_rest(3), (1, false), "3 items are the last frame's own");
    // A stream shorter than the leftover, and no unit before it, is still cut.
    let mut w = WindowCutter::new(8).unwrap().with_leftover(20);
    let mut out = Cut::default();
    w.cut(&items[..3], &[], &mut out).unwrap();
    w.end(&mut out).unwrap();
    assert_eq!(out.units.len(), 1);
}
