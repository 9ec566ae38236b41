//! The contract on a decoder small enough to check by hand: a repetition code
//! decoded by majority, in two formats (3 and 5 copies of each bit), with soft
//! output and a report per unit, two batches in flight.

use super::*;
use std::collections::VecDeque;

/// Format 0: 4 bits, each sent 3 times (12 LLRs); format 1: 2 bits, each sent
/// 5 times (10 LLRs). Soft output: the sum of a bit's copies. Reports count
/// one iteration, and "check" says whether every copy agreed.
pub(crate) struct Repetition {
    shapes: [UnitShape; 2],
    queue: VecDeque<Decoded>,
    pub most_in_flight: usize,
}

impl Repetition {
    pub(crate) fn new() -> Self {
        Self { shapes: [UnitShape::exact(12, 4), UnitShape::exact(10, 2)], queue: VecDeque::new(), most_in_flight: 0 }
    }
}

impl BatchDecoder<f32> for Repetition {
    fn shapes(&self) -> &[UnitShape] {
        &self.shapes
    }
    fn limit(&self) -> BatchLimit {
        BatchLimit { units: 3, items: 30 }
    }
    fn depth(&self) -> usize {
        2
    }
    fn submit(&mut self, batch: &Batch<'_, f32>) -> CodeResult<()> {
        check_batch(batch, &self.shapes, self.limit())?;
        if self.queue.len() >= self.depth() {
            return Err(CodeError::InvalidParameter("submitted beyond the depth".into()));
        }
        let mut d = Decoded::default();
        for u in 0..batch.units() {
            let copies = if batch.format(u) == 0 { 3 } else { 5 };
            let llrs = batch.unit(u);
            let mut agree = true;
            for bit in llrs.chunks(copies) {
                let sum: f32 = bit.iter().sum();
                agree &= bit.iter().all(|&x| (x < 0.0) == (sum < 0.0));
                d.bits.push(u8::from(sum < 0.0));
                d.soft.push(sum);
            }
            d.reports.push(UnitReport { bits: llrs.len() / copies, iterations: 1, blocks: 1, check: Some(agree), consumed: llrs.len() });
        }
        self.queue.push_back(d);
        self.most_in_flight = self.most_in_flight.max(self.queue.len());
        Ok(())
    }
    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(d) = self.queue.pop_front() else { return Ok(false) };
        out.bits.extend(d.bits);
        out.soft.extend(d.soft);
        out.reports.extend(d.reports);
        Ok(true)
    }
    fn in_flight(&self) -> usize {
        self.queue.len()
    }
    fn describe(&self) -> String {
        "repetition test decoder".into()
    }
    fn gives_soft(&self) -> bool {
        true
    }
}

/// `bits` sent `copies` times each as ±1 LLRs, copy `flip` of bit 0 negated.
pub(crate) fn sent(bits: &[u8], copies: usize, flip: Option<usize>) -> Vec<f32> {
    let mut v: Vec<f32> = bits.iter().flat_map(|&b| std::iter::repeat_n(if b == 0 { 1.0 } else { -1.0 }, copies)).collect();
    if let Some(i) = flip {
        v[i] = -v[i];
    }
    v
}

#[test]
fn units_of_different_formats_decode_in_order_with_soft_output_and_reports() {
    // Seven units of both formats, with a gap between two of them.
    let plan: [(&[u8], u16); 7] =
        [(&[0, 1, 1, 0], 0), (&[1, 0], 1), (&[1, 1, 1, 1], 0), (&[0, 1], 1), (&[0, 0], 1), (&[1, 0, 0, 1], 0), (&[1, 1], 1)];
    let mut items = Vec::new();
    let mut spans = Vec::new();
    for (i, (bits, format)) in plan.iter().enumerate() {
        if i == 3 {
            items.extend([9.0; 5]); // not part of any unit
        }
        let copies = if *format == 0 { 3 } else { 5 };
        let start = items.len();
        items.extend(sent(bits, copies, (i == 2).then_some(1)));
        spans.push(UnitSpan { start, len: bits.len() * copies, format: *format });
    }
    let mut dec = Repetition::new();
    let mut out = Decoded::default();
    dec.decode(&Batch::spans(&items, &spans).unwrap(), &mut out).unwrap();
    let want: Vec<u8> = plan.iter().flat_map(|(b, _)| b.iter().copied()).collect();
    assert_eq!(out.bits, want);
    assert_eq!(out.soft.len(), want.len());
    assert_eq!(out.soft[6], -1.0, "unit 2, bit 0: two of its three copies say 1");
    assert_eq!(out.units(), 7);
    let checks: Vec<Option<bool>> = out.reports.iter().map(|r| r.check).collect();
    assert_eq!(checks[2], Some(false));
    assert!(checks.iter().enumerate().all(|(i, c)| i == 2 || *c == Some(true)));
    assert_eq!(out.reports.iter().map(|r| r.consumed).sum::<usize>(), items.len() - 5);
    // Three units or 30 items a batch: split into at least three batches, never more than two in flight.
    assert_eq!(dec.most_in_flight, 2);
}

#[test]
fn uniform_units_decode_all() {
    let bits = [1u8, 0, 0, 1, 1, 1, 0, 0];
    let mut out = Vec::new();
    Repetition::new().decode_all(&sent(&bits, 3, None), &mut out).unwrap();
    assert_eq!(out, bits);
    let e = Repetition::new().decode_all(&[1.0; 13], &mut out).unwrap_err().to_string();
    assert!(e.contains("whole number of 12-item work units"), "{e}");
}

#[test]
fn units_the_decoder_does_not_take_are_refused() {
    let items = vec![1.0f32; 40];
    let mut dec = Repetition::new();
    let wrong_len = [UnitSpan { start: 0, len: 11, format: 0 }];
    let e = dec.submit(&Batch::spans(&items, &wrong_len).unwrap()).unwrap_err().to_string();
    assert!(e.contains("a unit of 11 items in format 0 does not fit") && e.contains("format 1: 10 items"), "{e}");
    let no_format = [UnitSpan { start: 0, len: 12, format: 2 }];
    assert!(dec.submit(&Batch::spans(&items, &no_format).unwrap()).is_err());
    let fits = Batch::uniform(&items[..24], 12).unwrap();
    let e = dec.submit(&Batch::uniform(&[1.0; 48], 12).unwrap()).unwrap_err().to_string();
    assert!(e.contains("exceeds the decoder's limit of 3 units"), "{e}");
    assert!(dec.submit(&fits).is_ok());
    let outside = [UnitSpan { start: 35, len: 10, format: 1 }];
    assert!(Batch::spans(&items, &outside).is_err());
    let empty = [UnitSpan { start: 0, len: 0, format: 0 }];
    assert!(Batch::spans(&items, &empty).is_err());
    assert!(Batch::uniform(&items, 0).is_err());
    // A unit larger than a whole batch can never be decoded.
    let huge = [UnitSpan { start: 0, len: 40, format: 0 }];
    assert!(Batch::spans(&items, &huge).unwrap().split_within(dec.limit()).is_err());
}
