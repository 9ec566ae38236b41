//! Time-varying block codes: a frame of N q-ary symbols, symbol i sent as
//! its codeword in codebook C_i.

use super::codebook::{Codebook, MAX_N, MAX_Q, check_sizes, rng};
use crate::codes::error::{CodeResult, invalid};
use rand::Rng;
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// Most symbols N in a frame.
pub const MAX_SYMBOLS: usize = 1 << 16;

/// Most bits τ = nN in a sent frame.
pub const MAX_FRAME_BITS: usize = 1 << 20;

/// Most codewords of all codebooks together (codebooks × q): 64 MiB of them.
pub const MAX_CODEWORDS: usize = 1 << 24;

/// Largest codebook file read.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// A time-varying block code: frames of N symbols of log2 q bits each, the
/// symbol at index i sent as its codeword in codebook i mod (codebooks), so
/// one codebook serves every index, or each index has its own.
///
/// # Example
/// ```
/// use gpufec::codes::sync::SyncCode;
/// let code = SyncCode::random(16, 8, 100, 1).unwrap();
/// assert_eq!((code.q(), code.n(), code.symbols(), code.tau(), code.info_bits()), (16, 8, 100, 800, 400));
/// assert_ne!(code.codebook(0), code.codebook(1)); // one codebook per index
/// let dm = SyncCode::davey_mackay(16, 8, 100, 1).unwrap();
/// assert_eq!(dm.codebook(0).q(), 16);
/// assert!(SyncCode::random(16, 3, 100, 1).is_err()); // 16 codewords of 3 bits
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncCode {
    symbols: usize,
    books: Arc<Vec<Codebook>>,
    name: String,
}

impl SyncCode {
    /// N = `symbols` symbols per frame, index i coded by `books[i mod books.len()]`;
    /// every codebook of the same q and n, and 1..=N of them.
    pub fn new(symbols: usize, books: Vec<Codebook>, name: &str) -> CodeResult<Self> {
        let first = books.first().ok_or_else(|| invalid!("a code needs at least one codebook"))?;
        let (q, n) = (first.q(), first.n());
        if !(1..=MAX_SYMBOLS).contains(&symbols) {
            return Err(invalid!("{symbols} symbols per frame: N must be 1..={MAX_SYMBOLS}"));
        }
        if symbols * n > MAX_FRAME_BITS {
            return Err(invalid!("frames of {symbols} codewords of {n} bits exceed {MAX_FRAME_BITS} bits"));
        }
        if books.len() > symbols {
            return Err(invalid!("{} codebooks for {symbols} symbols per frame: some would never be used", books.len()));
        }
        if let Some((i, b)) = books.iter().enumerate().find(|(_, b)| (b.q(), b.n()) != (q, n)) {
            return Err(invalid!("codebook {i} has q = {}, n = {}, the first q = {q}, n = {n}", b.q(), b.n()));
        }
        Ok(Self { symbols, books: Arc::new(books), name: name.to_string() })
    }

    /// A different random codebook for each of the N indices, from `seed`.
    pub fn random(q: usize, n: usize, symbols: usize, seed: u64) -> CodeResult<Self> {
        check_sizes(q, n)?;
        check_symbols(symbols)?;
        check_table(symbols, q)?;
        let mut r = rng(seed);
        let books = (0..symbols).map(|_| Codebook::random(q, n, &mut r)).collect::<CodeResult<_>>()?;
        Self::new(symbols, books, &format!("random per index (seed {seed})"))
    }

    /// One codebook for every index.
    pub fn repeated(book: Codebook, symbols: usize) -> CodeResult<Self> {
        Self::new(symbols, vec![book], "one codebook repeated")
    }

    /// The Davey–MacKay inner code: the sparse codebook (the q lightest n-bit
    /// words) added to a pseudo-random watermark of τ bits drawn from `seed`,
    /// so index i's codebook is the sparse one XOR the watermark's i-th n bits.
    pub fn davey_mackay(q: usize, n: usize, symbols: usize, seed: u64) -> CodeResult<Self> {
        let sparse = Codebook::sparse(q, n)?;
        check_symbols(symbols)?;
        check_table(symbols, q)?;
        let mut r = rng(seed);
        let mask = if n == MAX_N { u32::MAX } else { (1 << n) - 1 };
        let books = (0..symbols).map(|_| sparse.xor(r.random::<u32>() & mask)).collect();
        Self::new(symbols, books, &format!("Davey-MacKay sparse + watermark (seed {seed})"))
    }

    /// Every codeword followed by the bits of `marker`.
    pub fn with_marker(&self, marker: &[u8]) -> CodeResult<Self> {
        let books = self.books.iter().map(|b| b.with_marker(marker)).collect::<CodeResult<_>>()?;
        let shown: String = marker.iter().map(|b| char::from(b'0' + b)).collect();
        Self::new(self.symbols, books, &format!("{}, marker {shown}", self.name))
    }

    /// A code of N = `symbols` read from a codebook file: whitespace-separated
    /// tokens, `#` to the end of a line a comment; first `n q count`, then
    /// count·q codewords as strings of n characters `0`/`1`, codebook 0's q
    /// first. Every limit is checked: the file's size, n, q, the count
    /// (1..=N), the number of codewords, their lengths and that no codebook
    /// holds a codeword twice.
    pub fn read(path: &Path, symbols: usize) -> CodeResult<Self> {
        let shown = path.display();
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| invalid!("cannot read codebook file {shown}: {e}"))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(invalid!("codebook file {shown} is larger than {MAX_FILE_BYTES} bytes"));
        }
        Self::parse(&text, symbols).map_err(|e| invalid!("codebook file {shown}: {e}"))
    }

    /// [`read`](Self::read) from the file's text.
    pub fn parse(text: &str, symbols: usize) -> CodeResult<Self> {
        let mut tokens = text.lines().flat_map(|l| l.split('#').next().unwrap_or("").split_whitespace());
        let mut header = |what: &str| -> CodeResult<usize> {
            let t = tokens.next().ok_or_else(|| invalid!("the header ends before {what}"))?;
            t.parse().map_err(|_| invalid!("{what} '{t}' is not a number"))
        };
        let (n, q, count) = (header("n")?, header("q")?, header("count")?);
        check_sizes(q, n)?;
        check_symbols(symbols)?;
        if !(1..=symbols).contains(&count) {
            return Err(invalid!("{count} codebooks for frames of {symbols} symbols: give 1..={symbols}"));
        }
        check_table(count, q)?;
        let mut books = Vec::with_capacity(count);
        for b in 0..count {
            let mut words = Vec::with_capacity(q);
            let mut seen = HashSet::with_capacity(q);
            for d in 0..q {
                let t = tokens.next().ok_or_else(|| invalid!("codebook {b} ends after {d} of its {q} codewords (the file holds too few)"))?;
                if t.len() != n || !t.bytes().all(|c| c == b'0' || c == b'1') {
                    return Err(invalid!("codebook {b}, codeword {d}: '{t}' is not {n} bits of 0 and 1"));
                }
                let w = u32::from_str_radix(t, 2).map_err(|_| invalid!("codebook {b}, codeword {d}: '{t}'"))?;
                if !seen.insert(w) {
                    return Err(invalid!("codebook {b} holds codeword {t} twice"));
                }
                words.push(w);
            }
            books.push(Codebook::new(n, words)?);
        }
        if let Some(t) = tokens.next() {
            return Err(invalid!("more than {count}·{q} codewords: '{t}' and on are left over (wrong size)"));
        }
        Self::new(symbols, books, "from a file")
    }

    /// The text [`parse`](Self::parse) reads, for every codebook of this code.
    pub fn to_text(&self) -> String {
        let n = self.n();
        let mut s = format!("{n} {} {}\n", self.q(), self.books.len());
        for b in self.books.iter() {
            let words: Vec<String> = b.words().iter().map(|w| format!("{w:0n$b}")).collect();
            s.push_str(&words.join(" "));
            s.push('\n');
        }
        s
    }

    /// Symbols per frame N.
    pub fn symbols(&self) -> usize {
        self.symbols
    }

    /// Alphabet size q.
    pub fn q(&self) -> usize {
        self.books[0].q()
    }

    /// Bits per codeword n.
    pub fn n(&self) -> usize {
        self.books[0].n()
    }

    /// Information bits per symbol, log2 q.
    pub fn symbol_bits(&self) -> usize {
        self.q().trailing_zeros() as usize
    }

    /// Bits sent per frame τ = nN.
    pub fn tau(&self) -> usize {
        self.n() * self.symbols
    }

    /// Information bits per frame, N·log2 q.
    pub fn info_bits(&self) -> usize {
        self.symbol_bits() * self.symbols
    }

    /// Information bits over bits sent, log2 q / n.
    pub fn rate(&self) -> f64 {
        self.symbol_bits() as f64 / self.n() as f64
    }

    /// The codebook of symbol index `i`.
    pub fn codebook(&self, i: usize) -> &Codebook {
        &self.books[i % self.books.len()]
    }

    /// Distinct codebooks (1 when one is repeated).
    pub fn codebooks(&self) -> usize {
        self.books.len()
    }

    /// One line: `q=16 n=8 N=100, random per index (seed 1)`.
    pub fn describe(&self) -> String {
        format!("q={} n={} N={}, {}", self.q(), self.n(), self.symbols, self.name)
    }
}

fn check_symbols(symbols: usize) -> CodeResult<()> {
    if !(1..=MAX_SYMBOLS).contains(&symbols) {
        return Err(invalid!("{symbols} symbols per frame: N must be 1..={MAX_SYMBOLS}"));
    }
    Ok(())
}

/// `books` codebooks of q codewords, within [`MAX_CODEWORDS`].
fn check_table(books: usize, q: usize) -> CodeResult<()> {
    if books.saturating_mul(q) > MAX_CODEWORDS {
        return Err(invalid!("{books} codebooks of {q} codewords exceed {MAX_CODEWORDS} codewords in all"));
    }
    Ok(())
}

// MAX_Q bounds what a file may ask for before anything is allocated.
const _: () = assert!(MAX_Q <= 1 << 16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_and_every_limit_is_checked() {
        let code = SyncCode::random(4, 3, 6, 2).unwrap();
        let again = SyncCode::parse(&code.to_text(), 6).unwrap();
        assert_eq!((again.codebook(5), again.q(), again.n()), (code.codebook(5), 4, 3));
        let cases = [
            ("3 4 1\n000 011 101 000", "twice"),
            ("3 4 1\n000 011 101", "too few"),
            ("3 4 1\n000 011 101 110 111", "wrong size"),
            ("3 4 1\n000 011 101 11", "not 3 bits"),
            ("3 4 7\n", "codebooks for frames"),
            ("3 5 1\n", "power of two"),
            ("2 8 1\n", "need more than"),
            ("0 2 1\n", "n must be"),
            ("3 4", "header ends"),
            ("3 x 1", "not a number"),
        ];
        for (text, says) in cases {
            let e = SyncCode::parse(text, 6).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        let comment = "# n q count\n3 4 1 # one codebook\n000 011 101 110\n";
        assert_eq!(SyncCode::parse(comment, 6).unwrap().codebooks(), 1);
        assert!(SyncCode::read(Path::new("/nonexistent/codebooks"), 6).unwrap_err().to_string().contains("cannot read"));
    }

    #[test]
    fn frames_over_the_limits_are_refused() {
        assert!(SyncCode::random(4, 2, 0, 1).is_err());
        assert!(SyncCode::random(4, 2, MAX_SYMBOLS + 1, 1).is_err());
        let book = Codebook::sparse(4, 32).unwrap();
        assert!(SyncCode::repeated(book, MAX_SYMBOLS).unwrap_err().to_string().contains("exceed"));
        let e = SyncCode::random(MAX_Q, 16, MAX_SYMBOLS, 1).unwrap_err();
        assert!(e.to_string().contains("codewords in all"), "{e}");
    }

    #[test]
    fn the_davey_mackay_watermark_changes_per_index_but_keeps_the_sparse_distances() {
        let dm = SyncCode::davey_mackay(16, 8, 50, 3).unwrap();
        let sparse = Codebook::sparse(16, 8).unwrap();
        let first = dm.codebook(7).word(0);
        for d in 0..16 {
            assert_eq!(dm.codebook(7).word(d) ^ first, sparse.word(d) ^ sparse.word(0));
        }
        assert_ne!(dm.codebook(7), dm.codebook(8));
    }
}
