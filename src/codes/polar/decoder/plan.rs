//! The successive-cancellation schedule of a code as a flat list of
//! operations, with the constituent codes that need no further split decided
//! whole (Sarkis, Giard, Vardy, Thibeault, Gross, "Fast polar decoders:
//! algorithm and implementation", IEEE JSAC 2014): Rate-0 (all frozen),
//! Rate-1 (all information), repetition (only the last bit free) and
//! single-parity-check (only the first bit frozen) nodes. SC and SCL read
//! the same plan, which is what makes SCL with one path SC bit for bit.
//!
//! A node at depth d covers u_start … u_{start + 2^d − 1}; its LLRs are the
//! 2^d values of depth d, its output the 2^d bits of its part of the
//! codeword (x of the sub-code).

use crate::codes::polar::code::{BitKind, PolarCode};

/// How a node that is not split is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Node {
    /// All frozen: all zeros.
    Rate0,
    /// All information: the hard decisions.
    Rate1,
    /// Only the last bit free: all zeros or all ones, by the sign of the sum.
    Rep,
    /// Only the first bit frozen: the hard decisions with even parity (the
    /// least reliable bit flipped if needed).
    Spc,
    /// A single 5G parity-check bit: its value from the register.
    Parity,
}

/// One step of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// The left child's LLRs from the node's at depth `d`: f(a_i, a_{i+h}).
    Left { d: u32 },
    /// The right child's LLRs: g(a_i, a_{i+h}, the left child's bit i); the
    /// node starts at `start`.
    Right { d: u32, start: usize },
    /// The node's bits from its children's: (l ⊕ r, r).
    Combine { d: u32, start: usize },
    /// Decide a node whole.
    Decide { node: Node, d: u32, start: usize },
}

/// Which side of its parent a node at depth `d` starting at `start` is on.
pub(super) fn side(d: u32, start: usize) -> usize {
    (start >> d) & 1
}

/// The schedule of one code.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub(super) m: u32,
    pub(super) ops: Vec<Op>,
    /// Whether the code has 5G parity-check bits: then every information
    /// bit is a leaf of its own, so that the register sees them in order.
    pub(super) parity: bool,
}

impl Plan {
    /// The plan of `code`; `prune` decides Rate-1, repetition and SPC nodes
    /// whole (a code with parity-check bits is never pruned beyond Rate-0).
    pub(super) fn new(code: &PolarCode, prune: bool) -> Self {
        let parity = !code.parity().is_empty();
        let mut ops = Vec::new();
        build(code.kinds(), code.m(), 0, prune && !parity, &mut ops);
        Self { m: code.m(), ops, parity }
    }
}

/// The node kind of `kinds` (a node's bits) when it needs no split.
fn classify(kinds: &[BitKind], prune: bool) -> Option<Node> {
    use BitKind::{Frozen, Info, Parity};
    let all = |k: BitKind| kinds.iter().all(|&b| b == k);
    let (first, last) = (kinds[0], kinds[kinds.len() - 1]);
    match kinds.len() {
        _ if all(Frozen) => Some(Node::Rate0),
        1 if first == Info => Some(Node::Rate1),
        1 if first == Parity => Some(Node::Parity),
        _ if !prune => None,
        _ if all(Info) => Some(Node::Rate1),
        _ if last == Info && kinds[..kinds.len() - 1].iter().all(|&b| b == Frozen) => Some(Node::Rep),
        s if s >= 4 && first == Frozen && kinds[1..].iter().all(|&b| b == Info) => Some(Node::Spc),
        _ => None,
    }
}

fn build(kinds: &[BitKind], d: u32, start: usize, prune: bool, ops: &mut Vec<Op>) {
    let here = &kinds[start..start + (1 << d)];
    if let Some(node) = classify(here, prune) {
        ops.push(Op::Decide { node, d, start });
        return;
    }
    let h = 1 << (d - 1);
    ops.push(Op::Left { d });
    build(kinds, d - 1, start, prune, ops);
    ops.push(Op::Right { d, start });
    build(kinds, d - 1, start + h, prune, ops);
    ops.push(Op::Combine { d, start });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_papers_code_splits_into_its_constituents() {
        // (8, 4) with information set {3, 5, 6, 7}: left half [F F F I] is a
        // repetition node, right half [F I I I] a single parity check.
        let code = PolarCode::from_frozen(8, &[0, 1, 2, 4]).unwrap();
        let plan = Plan::new(&code, true);
        assert_eq!(
            plan.ops,
            vec![
                Op::Left { d: 3 },
                Op::Decide { node: Node::Rep, d: 2, start: 0 },
                Op::Right { d: 3, start: 0 },
                Op::Decide { node: Node::Spc, d: 2, start: 4 },
                Op::Combine { d: 3, start: 0 },
            ]
        );
        // Unpruned, every information bit is a leaf.
        let plain = Plan::new(&code, false);
        let leaves = plain.ops.iter().filter(|op| matches!(op, Op::Decide { node: Node::Rate1, d: 0, .. })).count();
        assert_eq!(leaves, 4);
        assert_eq!((side(2, 4), side(2, 0), side(0, 5)), (1, 0, 1));
    }
}
