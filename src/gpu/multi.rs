//! Several GPUs behind one decoder: a family's GPU decoder built once per
//! device, each batch dealt to the device with the fewest batches in flight,
//! results collected in the order the batches came. Every family gets it
//! through [`on_devices`], which its decoder builder calls.

use super::device::devices;
use super::pipeline::PipelineOptions;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitShape};
use crate::codes::error::{CodeResult, invalid};
use std::collections::VecDeque;

/// Most devices in a list (a host has at most a few dozen).
pub const MAX_GPU_DEVICES: usize = 64;

/// The devices a GPU decoder runs on, as a user names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceList {
    /// Every device the driver finds.
    All,
    /// These device indices, in this order.
    Listed(Vec<usize>),
}

impl DeviceList {
    /// `all`, or indices separated by commas (`0,1`); empty lists,
    /// duplicates and more than [`MAX_GPU_DEVICES`] are refused.
    ///
    /// # Example
    /// ```
    /// use gpufec::gpu::DeviceList;
    /// assert_eq!(DeviceList::parse("0, 2").unwrap(), DeviceList::Listed(vec![0, 2]));
    /// assert_eq!(DeviceList::parse("all").unwrap(), DeviceList::All);
    /// assert!(DeviceList::parse("1,1").is_err() && DeviceList::parse("").is_err() && DeviceList::parse("-1").is_err());
    /// ```
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let text = text.trim();
        if text == "all" {
            return Ok(Self::All);
        }
        anyhow::ensure!(!text.is_empty(), "an empty device list: give device indices (0,1) or all");
        let mut list = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let d: usize = part.parse().map_err(|_| anyhow::anyhow!("'{part}' is not a device index: give indices (0,1) or all"))?;
            anyhow::ensure!(!list.contains(&d), "device {d} is listed twice");
            list.push(d);
        }
        anyhow::ensure!(list.len() <= MAX_GPU_DEVICES, "{} devices listed; at most {MAX_GPU_DEVICES}", list.len());
        Ok(Self::Listed(list))
    }

    /// The device indices, each checked against the devices found.
    pub fn resolve(&self) -> anyhow::Result<Vec<usize>> {
        let found = devices()?.len();
        match self {
            Self::All => {
                anyhow::ensure!(found > 0, "no CUDA device found");
                Ok((0..found.min(MAX_GPU_DEVICES)).collect())
            }
            Self::Listed(list) => {
                for &d in list {
                    anyhow::ensure!(d < found, "CUDA device {d} does not exist ({found} found)");
                }
                Ok(list.clone())
            }
        }
    }
}

/// The GPU decoder `options` asks for: `build` called with the options of
/// each of its devices (`options.devices`, else `options.device` alone),
/// behind a [`MultiDevice`] when there are several.
pub(crate) fn on_devices<T: Copy + Send + Sync + 'static>(
    options: &PipelineOptions,
    build: impl Fn(&PipelineOptions) -> anyhow::Result<Box<dyn BatchDecoder<T>>>,
) -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
    let Some(list) = &options.devices else {
        return build(options);
    };
    let devices = list.resolve()?;
    if let [one] = devices[..] {
        return build(&PipelineOptions { device: one, devices: None, ..options.clone() });
    }
    let inner = devices
        .iter()
        .map(|&device| build(&PipelineOptions { device, devices: None, ..options.clone() }).map_err(|e| e.context(format!("GPU {device}"))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Box::new(MultiDevice::new(inner, devices)?))
}

/// One decoder per device behind one [`BatchDecoder`]: each batch goes to
/// the device with the fewest batches in flight (the first such), and
/// [`collect`](BatchDecoder::collect) takes results in submission order, so
/// the output is the one device's order whatever the dealing.
pub struct MultiDevice<T> {
    inner: Vec<Box<dyn BatchDecoder<T>>>,
    devices: Vec<usize>,
    /// The device of each batch in flight, oldest first.
    order: VecDeque<usize>,
    /// Batches and units each device has decoded.
    dealt: Vec<(u64, u64)>,
    /// Units of each batch in flight.
    units: VecDeque<usize>,
}

impl<T: Copy + Send + Sync> MultiDevice<T> {
    /// `inner[i]` runs on device `devices[i]`; all must take the same units.
    pub fn new(inner: Vec<Box<dyn BatchDecoder<T>>>, devices: Vec<usize>) -> anyhow::Result<Self> {
        anyhow::ensure!(!inner.is_empty() && inner.len() == devices.len(), "one decoder per device");
        let shapes = inner[0].shapes().to_vec();
        anyhow::ensure!(inner.iter().all(|d| d.shapes() == shapes.as_slice()), "the devices' decoders take different units");
        let n = inner.len();
        Ok(Self { inner, devices, order: VecDeque::new(), dealt: vec![(0, 0); n], units: VecDeque::new() })
    }

    /// The device that takes the next batch: the fewest batches in flight
    /// among those with room.
    fn least_busy(&self) -> CodeResult<usize> {
        (0..self.inner.len())
            .filter(|&i| self.inner[i].in_flight() < self.inner[i].depth())
            .min_by_key(|&i| self.inner[i].in_flight())
            .ok_or_else(|| invalid!("every device has its batches in flight: collect first"))
    }
}

impl<T: Copy + Send + Sync> BatchDecoder<T> for MultiDevice<T> {
    fn shapes(&self) -> &[UnitShape] {
        self.inner[0].shapes()
    }

    fn limit(&self) -> BatchLimit {
        let l = self.inner.iter().map(|d| d.limit());
        BatchLimit { units: l.clone().map(|l| l.units).min().unwrap_or(0), items: l.map(|l| l.items).min().unwrap_or(0) }
    }

    fn depth(&self) -> usize {
        self.inner.iter().map(|d| d.depth()).sum()
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let i = self.least_busy()?;
        self.inner[i].submit(batch)?;
        self.order.push_back(i);
        self.units.push_back(batch.units());
        Ok(())
    }

    unsafe fn submit_reused(&mut self, batch: &Batch<'_, T>) -> CodeResult<bool> {
        let i = self.least_busy()?;
        // SAFETY: the caller's promise, passed on to the device's decoder.
        let reused = unsafe { self.inner[i].submit_reused(batch) }?;
        self.order.push_back(i);
        self.units.push_back(batch.units());
        Ok(reused)
    }

    fn reused_read(&mut self) -> CodeResult<()> {
        self.inner.iter_mut().try_for_each(|d| d.reused_read())
    }

    fn forget_reused(&mut self) {
        self.inner.iter_mut().for_each(|d| d.forget_reused());
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(i) = self.order.pop_front() else { return Ok(false) };
        let units = self.units.pop_front().unwrap_or(0);
        let got = self.inner[i].collect(out)?;
        if got {
            self.dealt[i].0 += 1;
            self.dealt[i].1 += units as u64;
        }
        Ok(got)
    }

    fn in_flight(&self) -> usize {
        self.order.len()
    }

    fn describe(&self) -> String {
        let each: Vec<String> = self.inner.iter().map(|d| d.describe()).collect();
        let dealt: Vec<String> = self.dealt().iter().map(|(d, b, u)| format!("gpu {d}: {b} batches, {u} units")).collect();
        format!("{} GPUs, batches to the least busy: [{}]; so far {}", self.inner.len(), each.join("] + ["), dealt.join(", "))
    }

    fn pack_bits(&mut self) -> bool {
        let packs: Vec<bool> = self.inner.iter_mut().map(|d| d.pack_bits()).collect();
        packs.iter().all(|&p| p)
    }

    fn gives_soft(&self) -> bool {
        self.inner.iter().all(|d| d.gives_soft())
    }

    fn dealt(&self) -> Vec<(usize, u64, u64)> {
        self.devices.iter().zip(&self.dealt).map(|(&d, &(b, u))| (d, b, u)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::decode::UnitReport;

    /// A decoder whose bits say which device decoded each unit, with a depth of 2.
    struct Tagged {
        tag: u8,
        shape: [UnitShape; 1],
        queue: VecDeque<usize>,
    }

    impl BatchDecoder<u8> for Tagged {
        fn shapes(&self) -> &[UnitShape] {
            &self.shape
        }
        fn limit(&self) -> BatchLimit {
            BatchLimit { units: 3, items: 3 }
        }
        fn depth(&self) -> usize {
            2
        }
        fn submit(&mut self, batch: &Batch<'_, u8>) -> CodeResult<()> {
            self.queue.push_back(batch.items()[0] as usize);
            let _ = batch.units();
            Ok(())
        }
        fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
            let Some(first) = self.queue.pop_front() else { return Ok(false) };
            out.bits.extend([first as u8, self.tag]);
            out.reports.push(UnitReport { bits: 2, iterations: 0, blocks: 1, check: None, consumed: 1 });
            Ok(true)
        }
        fn in_flight(&self) -> usize {
            self.queue.len()
        }
        fn describe(&self) -> String {
            format!("tag {}", self.tag)
        }
    }

    /// Batches go to the least busy device and come back in submission order.
    #[test]
    fn batches_are_dealt_and_collected_in_order() {
        let dev = |tag| Box::new(Tagged { tag, shape: [UnitShape::exact(1, 2)], queue: VecDeque::new() }) as Box<dyn BatchDecoder<u8>>;
        let mut m = MultiDevice::new(vec![dev(10), dev(11)], vec![0, 1]).unwrap();
        assert_eq!(m.depth(), 4);
        let items: Vec<u8> = (0..9).collect();
        // Batch by batch (a stream's decoder block): dealt to 10, 11, 10, collected in order.
        let mut out = Decoded::default();
        for first in [0, 3, 6] {
            m.submit(&Batch::uniform(&items[first..first + 3], 1).unwrap()).unwrap();
        }
        while m.collect(&mut out).unwrap() {}
        assert_eq!(out.bits, vec![0, 10, 3, 11, 6, 10]);
        assert_eq!(m.dealt(), vec![(0, 2, 6), (1, 1, 3)]);
        assert!(m.describe().starts_with("2 GPUs"));
    }

    #[test]
    fn device_lists_are_checked() {
        for bad in ["", " ", "0,", "a", "0,0", "1e3", "-1"] {
            assert!(DeviceList::parse(bad).is_err(), "{bad:?} accepted");
        }
        let many = (0..65).map(|d| d.to_string()).collect::<Vec<_>>().join(",");
        assert!(DeviceList::parse(&many).unwrap_err().to_string().contains("at most 64"));
    }
}
