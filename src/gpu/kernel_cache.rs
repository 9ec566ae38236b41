//! Compiled kernel images kept on disk between processes, so that a family
//! compiling one kernel per block size does not pay NVRTC's seconds per kernel
//! on every run.
//!
//! The cache is an optimisation only: whatever goes wrong with it (no place to
//! put it, a full or read-only disk, a damaged file) turns into a miss or a
//! skipped store, never into an error for the user. The last reason a store
//! failed is kept so that `gpufec info` can show it.
//!
//! File format (`<16 hex digits of FNV-1a 64 of the key>.cubin`):
//!
//! ```text
//! gpufec kernel cache 1\n
//! key <key length in bytes>\n
//! <key text>\n
//! image <image length in bytes> <FNV-1a 64 of the image, 16 hex digits>\n
//! <image>
//! ```
//!
//! The file name is only a hash, so the whole key text is stored and compared
//! on load: a collision or a file left by another version is a miss, never a
//! wrong kernel. The image length and checksum make a truncated or damaged file
//! a miss too.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The first line of every cache file; bump the number when the layout changes.
const MAGIC: &[u8] = b"gpufec kernel cache 1\n";
/// Largest cache file read. Kernel images are tens or hundreds of KiB; anything
/// this big is not ours, and reading it would only cost memory.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;
/// Environment variable naming the cache directory, or `off`.
pub(crate) const ENV_VAR: &str = "GPUFEC_KERNEL_CACHE";

/// FNV-1a, 64 bits: enough to spread file names and to catch damaged bytes,
/// since the full key is compared on load anyway.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The text that names one compiled image: everything the image depends on.
/// Each field sits on its own line, strings quoted (Rust escapes), and the
/// source last behind its length, so that no two inputs give the same text.
pub(crate) fn key_text(file: &str, entry: &str, arch: &str, nvrtc: (i32, i32), options: &[String], source: &str) -> String {
    let mut key =
        format!("gpufec {}\nnvrtc {}.{}\narch {arch:?}\nfile {file:?}\nentry {entry:?}\n", env!("CARGO_PKG_VERSION"), nvrtc.0, nvrtc.1);
    for o in options {
        key.push_str(&format!("option {o:?}\n"));
    }
    key.push_str(&format!("source {}\n", source.len()));
    key.push_str(source);
    key
}

/// Why a lookup found no usable image (kept apart so that tests can tell a
/// size refusal from a parse failure).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Miss {
    /// No file under the key's name.
    Absent,
    /// The file is larger than [`MAX_FILE_BYTES`]; it was not read.
    TooLarge,
    /// The file could not be opened or read.
    Unreadable,
    /// The file is not a complete cache file (wrong magic, truncated, checksum).
    Corrupt,
    /// A valid file whose key is another one (hash collision or stale file).
    OtherKey,
}

/// Serialise one cache entry (see the module documentation for the layout).
pub(crate) fn encode(key: &str, image: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + key.len() + image.len() + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(format!("key {}\n", key.len()).as_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(format!("\nimage {} {:016x}\n", image.len(), fnv1a64(image)).as_bytes());
    out.extend_from_slice(image);
    out
}

/// The image of a cache entry, if `bytes` is a complete entry for exactly `key`.
pub(crate) fn decode(bytes: &[u8], key: &str) -> Result<Vec<u8>, Miss> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(Miss::Corrupt)?;
    let (fields, rest) = header_line(rest, "key ")?;
    let [key_len] = fields[..] else { return Err(Miss::Corrupt) };
    let key_len = usize::try_from(key_len).map_err(|_| Miss::Corrupt)?;
    let (stored, rest) = rest.split_at_checked(key_len).ok_or(Miss::Corrupt)?;
    let rest = rest.strip_prefix(b"\n").ok_or(Miss::Corrupt)?;
    if stored != key.as_bytes() {
        return Err(Miss::OtherKey);
    }
    let (fields, image) = header_line(rest, "image ")?;
    let [len, sum] = fields[..] else { return Err(Miss::Corrupt) };
    if image.len() as u64 != len {
        return Err(Miss::Corrupt);
    }
    if fnv1a64(image) != sum {
        return Err(Miss::Corrupt);
    }
    Ok(image.to_vec())
}

/// Split `<tag><numbers separated by spaces>\n` off the front of `bytes`: the
/// numbers (decimal, except a second one, the checksum, in hexadecimal) and
/// what follows the line.
fn header_line<'a>(bytes: &'a [u8], tag: &str) -> Result<(Vec<u64>, &'a [u8]), Miss> {
    let rest = bytes.strip_prefix(tag.as_bytes()).ok_or(Miss::Corrupt)?;
    // A header is short; looking further would scan a whole image for a newline.
    let end = rest.iter().take(64).position(|&b| b == b'\n').ok_or(Miss::Corrupt)?;
    let text = std::str::from_utf8(&rest[..end]).map_err(|_| Miss::Corrupt)?;
    let fields = text
        .split(' ')
        .enumerate()
        .map(|(i, w)| if i == 1 { u64::from_str_radix(w, 16) } else { w.parse() }.ok())
        .collect::<Option<Vec<u64>>>()
        .ok_or(Miss::Corrupt)?;
    Ok((fields, &rest[end + 1..]))
}

/// One directory of cache files.
#[derive(Debug, Clone)]
pub(crate) struct DiskCache {
    /// Where the files live; created on the first store.
    pub(crate) dir: PathBuf,
}

/// Makes temporary names unique between threads of one process (the process
/// id separates processes).
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl DiskCache {
    /// The file that holds (or would hold) the image of `key`.
    pub(crate) fn path_of(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{:016x}.cubin", fnv1a64(key.as_bytes())))
    }

    /// The stored image of `key`, or `None` on any kind of miss.
    pub(crate) fn load(&self, key: &str) -> Option<Vec<u8>> {
        self.lookup(key).ok()
    }

    /// The stored image of `key`, or why there is none.
    pub(crate) fn lookup(&self, key: &str) -> Result<Vec<u8>, Miss> {
        let mut file = match File::open(self.path_of(key)) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Miss::Absent),
            Err(_) => return Err(Miss::Unreadable),
        };
        // The size of the opened file, not of the path: the path may be renamed
        // over between the two.
        let size = file.metadata().map_err(|_| Miss::Unreadable)?.len();
        if size > MAX_FILE_BYTES {
            return Err(Miss::TooLarge);
        }
        // `take` bounds the read even if the file grows after the size check.
        let mut bytes = Vec::with_capacity(size as usize);
        (&mut file).take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|_| Miss::Unreadable)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(Miss::TooLarge);
        }
        decode(&bytes, key)
    }

    /// Store `image` under `key`, replacing any file there. The entry is
    /// written to a temporary file in the same directory and renamed over, so
    /// that a reader in another process sees the old file or the new one,
    /// never half of one.
    pub(crate) fn store(&self, key: &str, image: &[u8]) -> io::Result<()> {
        fs::create_dir_all(&self.dir).map_err(|e| context(e, "cannot create", &self.dir))?;
        let path = self.path_of(key);
        let tmp = self.dir.join(format!(
            ".{:016x}.{}.{}.tmp",
            fnv1a64(key.as_bytes()),
            std::process::id(),
            TMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        // No fsync: after a crash a half-written file fails the length and
        // checksum checks and is a miss, which costs one compile.
        let written = File::create_new(&tmp)
            .and_then(|mut f| f.write_all(&encode(key, image)))
            .map_err(|e| context(e, "cannot write", &tmp))
            .and_then(|()| fs::rename(&tmp, &path).map_err(|e| context(e, "cannot rename into", &path)));
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }

    /// Remove the file of `key`, if any (an image the driver rejected).
    pub(crate) fn remove(&self, key: &str) -> io::Result<()> {
        match fs::remove_file(self.path_of(key)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Number and total bytes of the cache files in the directory (none when
    /// it does not exist yet).
    pub(crate) fn usage(&self) -> io::Result<(usize, u64)> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((0, 0)),
            Err(e) => return Err(context(e, "cannot list", &self.dir)),
        };
        let mut count = 0;
        let mut bytes = 0;
        for entry in entries {
            let entry = entry?;
            if entry.path().extension().is_some_and(|x| x == "cubin") {
                count += 1;
                bytes += entry.metadata().map_or(0, |m| m.len());
            }
        }
        Ok((count, bytes))
    }

    /// `Ok` when a file can be created in the existing directory. Lets the
    /// status line say "not writable" before anything was compiled.
    fn probe(&self) -> io::Result<()> {
        if !self.dir.is_dir() {
            return Ok(());
        }
        let tmp = self.dir.join(format!(".probe.{}.{}.tmp", std::process::id(), TMP_SEQ.fetch_add(1, Ordering::Relaxed)));
        File::create_new(&tmp).map_err(|e| context(e, "cannot write in", &self.dir))?;
        fs::remove_file(&tmp)
    }
}

/// An I/O error that names what was being done and to which path.
fn context(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

/// Where the cache lives, as the environment says.
#[derive(Debug)]
pub(crate) enum Place {
    /// No disk cache, and why.
    Off(String),
    /// This directory.
    Disk(DiskCache),
}

/// The cache place from the values of `GPUFEC_KERNEL_CACHE`, `XDG_CACHE_HOME`
/// and `HOME`. Empty values count as unset, and a relative `XDG_CACHE_HOME` is
/// ignored, as the XDG base directory specification asks.
pub(crate) fn place_from(var: Option<OsString>, xdg: Option<OsString>, home: Option<OsString>) -> Place {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty());
    if let Some(v) = set(var) {
        if v == "off" {
            return Place::Off(format!("{ENV_VAR}=off"));
        }
        return Place::Disk(DiskCache { dir: PathBuf::from(v) });
    }
    if let Some(x) = set(xdg).map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Place::Disk(DiskCache { dir: x.join("gpufec").join("kernels") });
    }
    if let Some(h) = set(home) {
        return Place::Disk(DiskCache { dir: PathBuf::from(h).join(".cache").join("gpufec").join("kernels") });
    }
    Place::Off(format!("none of {ENV_VAR}, XDG_CACHE_HOME, HOME is set"))
}

/// The disk cache as the kernel loader uses it: a place, and the last reason a
/// store failed.
#[derive(Debug)]
pub(crate) struct KernelCache {
    place: Place,
    failure: Mutex<Option<String>>,
}

impl KernelCache {
    /// A cache at `place`.
    pub(crate) fn new(place: Place) -> Self {
        Self { place, failure: Mutex::new(None) }
    }

    fn disk(&self) -> Option<&DiskCache> {
        match &self.place {
            Place::Disk(d) => Some(d),
            Place::Off(_) => None,
        }
    }

    fn remember(&self, failure: Option<String>) {
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = failure;
    }

    /// Load the module of `key`: from the cached image when there is one and
    /// `load` accepts it, otherwise from `compile`'s image, which is then
    /// stored. A cached image `load` rejects (a driver that no longer takes it,
    /// a damaged file that passed the checks) is removed and compiled afresh,
    /// once. Only images that loaded are stored. Errors are those of `compile`
    /// and of loading a fresh image; the cache itself never fails the call.
    pub(crate) fn module<M>(
        &self,
        key: &str,
        compile: impl FnOnce() -> anyhow::Result<Vec<u8>>,
        mut load: impl FnMut(&[u8]) -> anyhow::Result<M>,
    ) -> anyhow::Result<M> {
        if let Some(disk) = self.disk()
            && let Some(image) = disk.load(key)
        {
            match load(&image) {
                Ok(m) => return Ok(m),
                Err(_) => {
                    let _ = disk.remove(key);
                }
            }
        }
        let image = compile()?;
        let module = load(&image)?;
        if let Some(disk) = self.disk() {
            self.remember(disk.store(key, &image).err().map(|e| e.to_string()));
        }
        Ok(module)
    }

    /// One line describing the cache, for `gpufec info`.
    pub(crate) fn status(&self) -> String {
        let disk = match &self.place {
            Place::Off(why) => return format!("kernel cache: off ({why})"),
            Place::Disk(d) => d,
        };
        let failure = self.failure.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(why) = failure.or_else(|| disk.probe().err().map(|e| e.to_string())) {
            return format!("kernel cache: not writable ({why})");
        }
        match disk.usage() {
            Ok((n, bytes)) => format!(
                "kernel cache: {} ({n} kernel{}, {:.1} MiB)",
                disk.dir.display(),
                if n == 1 { "" } else { "s" },
                bytes as f64 / (1u64 << 20) as f64
            ),
            Err(e) => format!("kernel cache: not readable ({e})"),
        }
    }
}

/// The process's cache, placed by the environment when first used.
pub(crate) fn global() -> &'static KernelCache {
    static CACHE: OnceLock<KernelCache> = OnceLock::new();
    CACHE.get_or_init(|| {
        KernelCache::new(place_from(std::env::var_os(ENV_VAR), std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")))
    })
}

/// One line saying where compiled kernels are cached on disk and how much is
/// there, that the cache is off, or why it cannot be written; for example
/// `kernel cache: /root/.cache/gpufec/kernels (12 kernels, 3.4 MiB)`. The
/// place comes from `GPUFEC_KERNEL_CACHE` (a directory, or `off`), else
/// `$XDG_CACHE_HOME/gpufec/kernels`, else `$HOME/.cache/gpufec/kernels`.
pub fn kernel_cache_status() -> String {
    global().status()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A fresh directory under the system's temporary one, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "gpufec-kcache-{name}-{}-{}",
                std::process::id(),
                TMP_SEQ.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
        fn cache(&self) -> DiskCache {
            DiskCache { dir: self.0.join("kernels") }
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// Serialises the tests that count the bytes this process reads.
    static READS: Mutex<()> = Mutex::new(());

    fn image(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    #[test]
    fn fnv1a64_matches_the_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn every_input_changes_the_key() {
        let opts = |o: &[&str]| o.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let base = key_text("v.cu", "k", "sm_90", (13, 0), &opts(&["-DA=1", "-DB=2"]), "src");
        let variants = [
            key_text("w.cu", "k", "sm_90", (13, 0), &opts(&["-DA=1", "-DB=2"]), "src"),
            key_text("v.cu", "j", "sm_90", (13, 0), &opts(&["-DA=1", "-DB=2"]), "src"),
            key_text("v.cu", "k", "sm_80", (13, 0), &opts(&["-DA=1", "-DB=2"]), "src"),
            key_text("v.cu", "k", "sm_90", (13, 1), &opts(&["-DA=1", "-DB=2"]), "src"),
            key_text("v.cu", "k", "sm_90", (13, 0), &opts(&["-DB=2", "-DA=1"]), "src"),
            key_text("v.cu", "k", "sm_90", (13, 0), &opts(&["-DA=1 -DB=2"]), "src"),
            // An option holding what looks like the next line must not pass for two.
            key_text("v.cu", "k", "sm_90", (13, 0), &opts(&["-DA=1\noption -DB=2"]), "src"),
            key_text("v.cu", "k", "sm_90", (13, 0), &opts(&["-DA=1", "-DB=2"]), "src "),
        ];
        for v in &variants {
            assert_ne!(*v, base);
        }
        assert!(base.contains(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn a_stored_image_loads_back() {
        let tmp = TempDir::new("roundtrip");
        let cache = tmp.cache();
        let img = image(10_000, 1);
        assert_eq!(cache.lookup("key one"), Err(Miss::Absent));
        cache.store("key one", &img).unwrap();
        assert_eq!(cache.load("key one"), Some(img.clone()));
        let name = cache.path_of("key one").file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.len() == 22 && name.ends_with(".cubin") && name[..16].chars().all(|c| c.is_ascii_hexdigit()), "{name}");
        assert_eq!(cache.usage().unwrap(), (1, fs::metadata(cache.path_of("key one")).unwrap().len()));
        let status = KernelCache::new(Place::Disk(cache.clone())).status();
        assert!(status.starts_with(&format!("kernel cache: {} (1 kernel, ", cache.dir.display())), "{status}");
        // An empty image and a key with newlines survive too.
        cache.store("a\nb\n", &[]).unwrap();
        assert_eq!(cache.load("a\nb\n"), Some(vec![]));
    }

    #[test]
    fn another_key_under_the_same_name_is_a_miss() {
        let tmp = TempDir::new("collision");
        let cache = tmp.cache();
        fs::create_dir_all(&cache.dir).unwrap();
        // What a hash collision or a file of another version leaves under the name.
        fs::write(cache.path_of("wanted key"), encode("other key", &image(100, 2))).unwrap();
        assert_eq!(cache.lookup("wanted key"), Err(Miss::OtherKey));
        // A key that is a prefix of the stored one is no match either.
        fs::write(cache.path_of("wanted"), encode("wanted key", &image(100, 2))).unwrap();
        assert_eq!(cache.lookup("wanted"), Err(Miss::OtherKey));
        cache.store("wanted key", &image(100, 3)).unwrap();
        assert_eq!(cache.load("wanted key"), Some(image(100, 3)));
    }

    #[test]
    fn truncated_or_damaged_files_are_misses_and_get_overwritten() {
        let tmp = TempDir::new("truncated");
        let cache = tmp.cache();
        let img = image(300, 4);
        cache.store("k", &img).unwrap();
        let path = cache.path_of("k");
        let whole = fs::read(&path).unwrap();
        for len in 0..whole.len() {
            fs::write(&path, &whole[..len]).unwrap();
            assert_eq!(cache.lookup("k"), Err(Miss::Corrupt), "cut at {len} of {}", whole.len());
        }
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 0x10;
        fs::write(&path, &flipped).unwrap();
        assert_eq!(cache.lookup("k"), Err(Miss::Corrupt), "a flipped image byte");
        let mut longer = whole.clone();
        longer.push(0);
        fs::write(&path, &longer).unwrap();
        assert_eq!(cache.lookup("k"), Err(Miss::Corrupt), "a byte appended");
        cache.store("k", &img).unwrap();
        assert_eq!(cache.load("k"), Some(img));
    }

    #[test]
    fn a_wrong_magic_line_is_a_miss() {
        let tmp = TempDir::new("magic");
        let cache = tmp.cache();
        cache.store("k", &image(50, 5)).unwrap();
        let path = cache.path_of("k");
        let mut bytes = fs::read(&path).unwrap();
        bytes[MAGIC.len() - 2] = b'2';
        fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.lookup("k"), Err(Miss::Corrupt));
    }

    /// Bytes this process has read through read(2) and friends, on Linux.
    fn bytes_read() -> Option<u64> {
        let io = fs::read_to_string("/proc/self/io").ok()?;
        io.lines().find_map(|l| l.strip_prefix("rchar: "))?.trim().parse().ok()
    }

    #[test]
    fn an_oversized_file_is_refused_by_its_size() {
        let _reads = READS.lock().unwrap_or_else(|p| p.into_inner());
        let tmp = TempDir::new("oversized");
        let cache = tmp.cache();
        cache.store("k", &image(10, 6)).unwrap();
        // Sparse: costs no disk, and reading it would show in the byte count.
        File::options().write(true).open(cache.path_of("k")).unwrap().set_len(MAX_FILE_BYTES + 1).unwrap();
        let before = bytes_read();
        assert_eq!(cache.lookup("k"), Err(Miss::TooLarge));
        if let (Some(before), Some(after)) = (before, bytes_read()) {
            assert!(after - before < 1 << 20, "{} bytes were read to refuse the file", after - before);
        }
        // Exactly at the limit is read (and is then no valid entry).
        File::options().write(true).open(cache.path_of("k")).unwrap().set_len(MAX_FILE_BYTES).unwrap();
        assert_eq!(cache.lookup("k"), Err(Miss::Corrupt));
    }

    #[test]
    fn an_unwritable_directory_fails_the_store_not_the_caller() {
        let tmp = TempDir::new("unwritable");
        // Below a regular file no directory can be made, even by root.
        fs::write(tmp.0.join("file"), b"x").unwrap();
        let disk = DiskCache { dir: tmp.0.join("file").join("kernels") };
        assert!(disk.store("k", &image(10, 7)).is_err());
        assert_eq!(disk.load("k"), None);
        let cache = KernelCache::new(Place::Disk(disk));
        let mut compiled = 0;
        for _ in 0..2 {
            let m = cache.module(
                "k",
                || {
                    compiled += 1;
                    Ok(image(10, 7))
                },
                |img| Ok(img.len()),
            );
            assert_eq!(m.unwrap(), 10);
        }
        assert_eq!(compiled, 2, "nothing could be cached, so both calls compile");
        let status = cache.status();
        assert!(status.starts_with("kernel cache: not writable (cannot create "), "{status}");
    }

    #[test]
    fn concurrent_stores_of_one_key_leave_a_valid_file() {
        let _reads = READS.lock().unwrap_or_else(|p| p.into_inner());
        let tmp = TempDir::new("concurrent");
        let cache = Arc::new(tmp.cache());
        let img = Arc::new(image(1 << 20, 8));
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let (cache, img) = (cache.clone(), img.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        cache.store("k", &img).unwrap();
                    }
                })
            })
            .collect();
        let reader = {
            let (cache, img, done) = (cache.clone(), img.clone(), done.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                while !done.load(Ordering::Relaxed) {
                    // Once the file exists every reader must find it whole.
                    if cache.path_of("k").exists() {
                        assert!(cache.load("k").as_ref() == Some(&*img), "a reader saw a partial file");
                        seen += 1;
                    }
                }
                seen
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        let seen = reader.join().unwrap();
        assert!(cache.load("k").as_ref() == Some(&*img));
        let names: Vec<_> = fs::read_dir(&cache.dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![cache.path_of("k").file_name().unwrap().to_owned()], "temporary files left behind");
        assert!(seen > 0, "the reader never ran while writers did");
    }

    #[test]
    fn a_cached_image_the_loader_rejects_is_replaced() {
        let tmp = TempDir::new("rejected");
        let disk = tmp.cache();
        let cache = KernelCache::new(Place::Disk(disk.clone()));
        let good = image(64, 9);
        let bad = image(64, 10);
        let load = |img: &[u8]| if img == good { Ok(img.to_vec()) } else { anyhow::bail!("rejected") };
        // A hit does not compile.
        disk.store("k", &good).unwrap();
        assert_eq!(cache.module("k", || panic!("compiled on a hit"), load).unwrap(), good);
        // A rejected cached image is removed, compiled afresh, and the fresh one stored.
        disk.store("k", &bad).unwrap();
        assert_eq!(cache.module("k", || Ok(good.clone()), load).unwrap(), good);
        assert_eq!(disk.load("k"), Some(good.clone()));
        // A fresh image the loader rejects is an error and is not stored.
        disk.remove("k").unwrap();
        assert!(cache.module("k", || Ok(bad.clone()), load).is_err());
        assert_eq!(disk.lookup("k"), Err(Miss::Absent));
        // A compile error is the caller's error.
        assert!(cache.module("k", || anyhow::bail!("no NVRTC"), load).is_err());
    }

    #[test]
    fn the_environment_places_the_cache() {
        let os = |s: &str| Some(OsString::from(s));
        let dir = |p: Place| match p {
            Place::Disk(d) => d.dir,
            Place::Off(why) => panic!("off: {why}"),
        };
        match place_from(os("off"), os("/xdg"), os("/home/u")) {
            Place::Off(why) => assert_eq!(why, "GPUFEC_KERNEL_CACHE=off"),
            other => panic!("{other:?}"),
        }
        assert_eq!(KernelCache::new(place_from(os("off"), None, None)).status(), "kernel cache: off (GPUFEC_KERNEL_CACHE=off)");
        assert_eq!(dir(place_from(os("/srv/k"), os("/xdg"), os("/home/u"))), PathBuf::from("/srv/k"));
        assert_eq!(dir(place_from(os("rel/k"), None, None)), PathBuf::from("rel/k"));
        assert_eq!(dir(place_from(None, os("/xdg"), os("/home/u"))), PathBuf::from("/xdg/gpufec/kernels"));
        assert_eq!(dir(place_from(os(""), os("/xdg"), os("/home/u"))), PathBuf::from("/xdg/gpufec/kernels"));
        assert_eq!(dir(place_from(None, os("relative"), os("/home/u"))), PathBuf::from("/home/u/.cache/gpufec/kernels"));
        assert_eq!(dir(place_from(None, os(""), os("/home/u"))), PathBuf::from("/home/u/.cache/gpufec/kernels"));
        assert!(matches!(place_from(None, None, None), Place::Off(_)));
        assert!(matches!(place_from(os(""), os(""), os("")), Place::Off(_)));
    }
}
