//! How items move through the blocks: one output per input ([`map_each`]), or
//! any number of outputs per input through a backlog ([`Relay`]).

use crate::codes::channel::Sample;
use futuresdr::runtime::dev::prelude::*;

/// Largest input chunk a [`Relay`] takes at once, which bounds its backlog.
const CHUNK: usize = 1 << 20;

/// Bytes of the stream buffer behind every output of these blocks, per two
/// cores: [`buffer_bytes`].
///
/// FutureSDR 0.0.40's circular buffers guard their indices with a spin lock.
/// With its default 32 KiB buffers the blocks of a chain meet on those locks
/// thousands of times per megabit, and when threads outnumber cores (the CPU
/// decoder takes every core) a thread preempted while holding one leaves the
/// others spinning: on a 2-core machine that was about 60 % of all CPU time.
/// With 1 MiB buffers it was a few percent; 4 MiB took 3–8 % less CPU time
/// than 1 MiB on the AWGN flowgraph there (fewer work calls, fewer rayon
/// hand-overs), and 16 MiB ran slower (BENCHMARKS.md, issue 13).
const BUFFER_BYTES_PER_TWO_CORES: usize = 4 << 20;
/// Most bytes of one such buffer.
const MAX_BUFFER_BYTES: usize = 32 << 20;

/// The stream buffer of these blocks' outputs: 4 MiB per two cores, at most
/// 32 MiB. Where many cores run a chain's blocks at once, a deeper buffer
/// lets each block work on while its neighbour holds a large piece: on the
/// lent H200's 16-core host, against 4 MiB, 32 MiB ran `turbo_awgn.toml`
/// 994 → 1562 Mb/s, `turbo_tb_awgn.toml` 843 → 1202, `viterbi_awgn.toml`
/// 1514 → 2401 and `polar_awgn.toml` 1246 → 2060 (64 MiB: 1483, 1192,
/// 2184, 1972); on two cores 4 MiB stays best (above).
fn buffer_bytes() -> usize {
    (BUFFER_BYTES_PER_TWO_CORES * (crate::codes::threads::cores() / 2).max(1)).min(MAX_BUFFER_BYTES)
}

/// An output port whose buffer holds [`buffer_bytes`].
pub(crate) fn output<T: CpuSample>() -> DefaultCpuWriter<T> {
    let mut w = DefaultCpuWriter::default();
    w.set_min_buffer_size_in_items(buffer_bytes() / size_of::<T>().max(1));
    w
}

/// Move items through a block that makes exactly one output per input: `f`
/// fills an output slice from an input slice of the same length. Tags travel
/// with their items; `taken` counts the items moved. The block finishes once
/// its input has ended and drained.
pub(crate) fn map_each<I: CpuSample, O: CpuSample>(
    input: &mut DefaultCpuReader<I>,
    output: &mut DefaultCpuWriter<O>,
    io: &mut WorkIo,
    taken: &mut u64,
    mut f: impl FnMut(&[I], &mut [O]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    map_each_tagged(input, output, io, taken, |i, o, _| f(i, o))
}

/// [`map_each`] whose `f` also sees the tags on the input slice it is given
/// (indices relative to it), read in the same look at the buffer.
pub(crate) fn map_each_tagged<I: CpuSample, O: CpuSample>(
    input: &mut DefaultCpuReader<I>,
    output: &mut DefaultCpuWriter<O>,
    io: &mut WorkIo,
    taken: &mut u64,
    mut f: impl FnMut(&[I], &mut [O], &[ItemTag]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let (i, in_tags) = input.slice_with_tags();
    let (o, mut out_tags) = output.slice_with_tags();
    let available = i.len();
    let n = available.min(o.len());
    if n > 0 {
        let tags: Vec<ItemTag> = in_tags.iter().filter(|t| t.index < n).cloned().collect();
        f(&i[..n], &mut o[..n], &tags)?;
        for t in tags {
            out_tags.add_tag(t.index, t.tag);
        }
        input.consume(n);
        output.produce(n);
        *taken += n as u64;
    }
    if input.finished() && n == available {
        io.finished = true;
    }
    Ok(())
}

/// A stream transformation with state, fed chunk by chunk.
pub(crate) trait Transform<I, O> {
    /// Turn `input` (with the stream's `tags` on it, indices relative to it;
    /// tags past its end may be among them) into items appended to `out`.
    fn process(&mut self, input: &[I], tags: &[ItemTag], out: &mut Backlog<O>) -> anyhow::Result<()>;

    /// Write the output of the first items of `input` straight into `out`,
    /// the room in the output buffer, when the transform can do without
    /// its backlog (an identity, an encoder whose output is a fixed
    /// multiple of its input): `Some((items taken, items written))`, with
    /// `(0, 0)` when `out` has no room for the output of one item. `None`
    /// sends the input through [`process`](Self::process). Tags are
    /// treated as `process` treats them (these transforms drop them), so
    /// which way the items went does not show.
    fn direct(&mut self, _input: &[I], _out: &mut [O]) -> anyhow::Result<Option<(usize, usize)>> {
        Ok(None)
    }

    /// End of stream: append what remains, or say why the stream is incomplete.
    fn finish(&mut self, _out: &mut Backlog<O>) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The body of [`Transform::direct`] for a transform that knows whether its
/// items pass unchanged (`passes(n)`, which notes the `n` items passed):
/// copy as many as `out` has room for if so.
pub(crate) fn copy_if<T: Copy>(passes: impl FnOnce(usize) -> bool, input: &[T], out: &mut [T]) -> Option<(usize, usize)> {
    let n = input.len().min(out.len());
    passes(n).then(|| {
        out[..n].copy_from_slice(&input[..n]);
        (n, n)
    })
}

/// Output items not yet written, with tags on some of them.
#[derive(Debug)]
pub(crate) struct Backlog<O> {
    /// The items; a transform appends here.
    pub items: Vec<O>,
    /// (index in `items`, tag), in index order.
    tags: Vec<(usize, Tag)>,
    /// Items already written.
    sent: usize,
}

impl<O> Default for Backlog<O> {
    fn default() -> Self {
        Self { items: Vec::new(), tags: Vec::new(), sent: 0 }
    }
}

impl<O> Backlog<O> {
    /// Tag the item at `index` of `items` (pushed already or next).
    pub fn tag(&mut self, index: usize, tag: Tag) {
        self.tags.push((index, tag));
    }

    fn pending(&self) -> usize {
        self.items.len() - self.sent
    }
}

/// Drives a [`Transform`] between a FutureSDR input and output: input is taken
/// only once the backlog of earlier output has drained, so memory stays bounded
/// and a full output buffer holds the input back.
#[derive(Debug)]
pub(crate) struct Relay<O> {
    backlog: Backlog<O>,
    ended: bool,
    taken: u64,
}

impl<O> Default for Relay<O> {
    fn default() -> Self {
        Self { backlog: Backlog::default(), ended: false, taken: 0 }
    }
}

impl<O> Relay<O> {
    /// Input items taken so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }
}

impl<O: CpuSample + Copy> Relay<O> {
    /// One `work` call of the block.
    pub fn work<I: CpuSample>(
        &mut self,
        transform: &mut impl Transform<I, O>,
        input: &mut DefaultCpuReader<I>,
        output: &mut DefaultCpuWriter<O>,
        io: &mut WorkIo,
    ) -> anyhow::Result<()> {
        loop {
            self.drain(output);
            if self.backlog.pending() > 0 {
                return Ok(());
            }
            if self.ended {
                io.finished = true;
                return Ok(());
            }
            let (i, tags) = input.slice_with_tags();
            if !i.is_empty() {
                if let Some((took, wrote)) = transform.direct(i, output.slice())? {
                    if took == 0 {
                        // No room: the reader's next consume calls this block again.
                        return Ok(());
                    }
                    input.consume(took);
                    output.produce(wrote);
                    self.taken += took as u64;
                    continue;
                }
                let n = i.len().min(CHUNK);
                transform.process(&i[..n], tags, &mut self.backlog)?;
                input.consume(n);
                self.taken += n as u64;
            } else if input.finished() {
                transform.finish(&mut self.backlog)?;
                self.ended = true;
            } else {
                return Ok(());
            }
        }
    }

    fn drain(&mut self, output: &mut DefaultCpuWriter<O>) {
        let b = &mut self.backlog;
        let (o, mut tags) = output.slice_with_tags();
        let n = o.len().min(b.pending());
        o[..n].copy_from_slice(&b.items[b.sent..b.sent + n]);
        let end = b.sent + n;
        let due = b.tags.iter().take_while(|(at, _)| *at < end).count();
        for (at, tag) in b.tags.drain(..due) {
            tags.add_tag(at - b.sent, tag);
        }
        output.produce(n);
        b.sent = end;
        if b.sent == b.items.len() {
            b.items.clear();
            b.sent = 0;
        }
    }
}

/// [`map_each`] for a block that maps each finite sample on its own: a NaN or
/// infinite input fails with its position in the stream (`position` counts the
/// items seen so far and is advanced here).
pub(crate) fn map_finite<I: CpuSample + Sample, O: CpuSample>(
    input: &mut DefaultCpuReader<I>,
    output: &mut DefaultCpuWriter<O>,
    io: &mut WorkIo,
    position: &mut u64,
    f: impl Fn(I) -> O,
) -> anyhow::Result<()> {
    let at = *position;
    map_each(input, output, io, position, |x, y| {
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            anyhow::bail!("value {} of the stream is NaN or infinite", at + i as u64);
        }
        for (o, &v) in y.iter_mut().zip(x) {
            *o = f(v);
        }
        Ok(())
    })
}
