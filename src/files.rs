//! The files a run reads and writes, kept safe: no output may be one of the
//! run's inputs (or another output), a result file is replaced whole or not
//! at all, and an open that waits (a FIFO with nobody at the other end) says
//! on stderr what it waits for.
//!
//! Shared by every command and flowgraph; it knows nothing of codes.

use anyhow::bail;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A file the run uses, and what uses it (for messages: "block 'decoded'",
/// "--json", "the flowgraph file").
#[derive(Debug, Clone)]
pub struct Use {
    /// What reads or writes it.
    pub by: String,
    /// The path as the user gave it.
    pub path: PathBuf,
}

impl Use {
    /// `path`, used by `by`.
    pub fn new(by: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self { by: by.into(), path: path.into() }
    }
}

/// Which file a path names, links followed: an existing regular file or
/// FIFO by device and inode; a file not there yet by its directory's and its
/// name. Devices such as `/dev/null` or a terminal are read and written by
/// many at once and destroy nothing: `None`.
#[derive(Debug, PartialEq)]
enum Key {
    File(u64, u64),
    New(u64, u64, std::ffi::OsString),
}

fn key(path: &Path) -> Option<Key> {
    match std::fs::metadata(path) {
        Ok(meta) => (meta.is_file() || meta.file_type().is_fifo()).then(|| Key::File(meta.dev(), meta.ino())),
        Err(_) => {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let dir = std::fs::metadata(parent).ok()?;
            Some(Key::New(dir.dev(), dir.ino(), path.file_name()?.to_owned()))
        }
    }
}

fn keyed(uses: &[Use]) -> Vec<(Option<Key>, &Use)> {
    uses.iter().map(|u| (key(&u.path), u)).collect()
}

/// Refuse, before anything is opened for writing, an output that is the same
/// file (device and inode, after links) as an input of the run or as another
/// output: writing it would destroy the input, or mix two streams in one file.
pub fn refuse_overwriting(inputs: &[Use], outputs: &[Use]) -> anyhow::Result<()> {
    let (inputs, outputs) = (keyed(inputs), keyed(outputs));
    for (i, (k, out)) in outputs.iter().enumerate() {
        let Some(k) = k else { continue };
        if let Some((_, input)) = inputs.iter().find(|(other, _)| other.as_ref() == Some(k) && matches!(k, Key::File(..))) {
            let same = if input.path == out.path { String::new() } else { format!(" (the same file as {})", input.path.display()) };
            bail!(
                "{} would write {}{same}, an input of the run ({}): writing it would destroy it; give the output another path",
                out.by,
                out.path.display(),
                input.by
            );
        }
        if let Some((_, other)) = outputs[..i].iter().find(|(other, _)| other.as_ref() == Some(k)) {
            bail!("{} and {} would both write {}: give each output its own path", other.by, out.by, out.path.display());
        }
    }
    Ok(())
}

/// Write `bytes` to `path` whole: into a temporary file beside it, then
/// renamed over it, so that a run stopped midway (a signal, a full disk)
/// leaves the previous contents, never a truncated file. A path that is not
/// a regular file (a FIFO, `/dev/stdout`) is written as it is.
pub fn replace(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut file = Replacement::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file written whole, as [`replace`] writes one, for an output written
/// piece by piece: the pieces go into a temporary file beside `path`, which
/// [`Replacement::commit`] renames over it. Dropped without a commit (the
/// run failed), it removes the temporary file and `path` is as it was. A
/// path that is not a regular file (a FIFO, `/dev/stdout`) is written as it is.
pub struct Replacement {
    path: PathBuf,
    /// The temporary file, while there is one to rename or remove.
    temp: Option<PathBuf>,
    file: std::io::BufWriter<std::fs::File>,
}

impl Replacement {
    /// Start writing `path`.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let failed = |e: std::io::Error| anyhow::anyhow!("cannot write {}: {e}", path.display());
        let regular = std::fs::metadata(path).map(|m| m.is_file()).unwrap_or(true);
        let temp = if regular { Some(partial(path)?) } else { None };
        let file = std::fs::File::create(temp.as_deref().unwrap_or(path)).map_err(failed)?;
        Ok(Self { path: path.to_path_buf(), temp, file: std::io::BufWriter::with_capacity(1 << 20, file) })
    }

    /// Write `bytes` after what was written.
    pub fn write_all(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        use std::io::Write;
        self.file.write_all(bytes).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.path.display()))
    }

    /// Put what was written in place of `path`.
    pub fn commit(mut self) -> anyhow::Result<()> {
        use std::io::Write;
        let failed = |e: std::io::Error| anyhow::anyhow!("cannot write {}: {e}", self.path.display());
        self.file.flush().map_err(failed)?;
        if let Some(temp) = &self.temp {
            std::fs::rename(temp, &self.path).map_err(failed)?;
            self.temp = None;
        }
        Ok(())
    }
}

impl Drop for Replacement {
    fn drop(&mut self) {
        if let Some(temp) = &self.temp {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Check that [`replace`] can write `path`, leaving it as it is: a
/// temporary file beside it is made and removed.
pub fn check_writable(path: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => bail!("{} is a directory", path.display()),
        Ok(m) if !m.is_file() => return Ok(()),
        _ => {}
    }
    let temp = partial(path)?;
    std::fs::write(&temp, b"").map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    let _ = std::fs::remove_file(&temp);
    Ok(())
}

/// The temporary file beside `path` that [`replace`] writes first.
fn partial(path: &Path) -> anyhow::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| anyhow::anyhow!("{} names no file", path.display()))?;
    Ok(path.with_file_name(format!(".{}.{}.partial", name.to_string_lossy(), std::process::id())))
}

/// How long an open may wait before [`open_saying`] says what it waits for.
const QUIET: Duration = Duration::from_secs(1);

/// Run `open` (which may wait: a FIFO's open waits for its other end), and
/// if it has not returned within a second, say on stderr that it waits for
/// `what` ("a writer of FIFO x.i8"), and again when it goes on.
pub fn open_saying<R>(what: &str, open: impl FnOnce() -> R) -> R {
    let (opened, waiting) = std::sync::mpsc::channel::<()>();
    let what_ = what.to_string();
    let watcher = std::thread::spawn(move || {
        if waiting.recv_timeout(QUIET).is_err() {
            eprintln!("waiting for {what_} (Ctrl-C to stop)");
            return waiting.recv().is_ok();
        }
        false
    });
    let r = open();
    let _ = opened.send(());
    if watcher.join().unwrap_or(false) {
        eprintln!("{what}: there, going on");
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpufec-files-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_through_links_too() {
        let d = dir();
        let (a, b) = (d.join("a.i8"), d.join("b.i8"));
        std::fs::write(&a, b"llrs").unwrap();
        let link = d.join("link.i8");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let inputs = [Use::new("block 'src'", &a)];
        let e = refuse_overwriting(&inputs, &[Use::new("block 'snk'", &a)]).unwrap_err().to_string();
        assert!(e.contains("block 'snk' would write") && e.contains("an input of the run (block 'src')"), "{e}");
        let e = refuse_overwriting(&inputs, &[Use::new("--json", &link)]).unwrap_err().to_string();
        assert!(e.contains("--json") && e.contains("the same file as"), "{e}");
        // A new file, another file, and devices are fine.
        refuse_overwriting(&inputs, &[Use::new("x", &b), Use::new("y", "/dev/null"), Use::new("z", "/dev/null")]).unwrap();
        // Two outputs to one file, there already or not yet.
        for exists in [false, true] {
            let _ = std::fs::remove_file(&b);
            if exists {
                std::fs::write(&b, b"").unwrap();
            }
            let other = d.join(".").join("b.i8");
            let e = refuse_overwriting(&[], &[Use::new("block 'one'", &b), Use::new("block 'two'", &other)]).unwrap_err().to_string();
            assert!(e.contains("block 'one' and block 'two' would both write"), "{e}");
        }
    }

    #[test]
    fn a_replaced_file_is_whole_and_leaves_nothing_beside_it() {
        let d = dir().join("replace");
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("curve.json");
        std::fs::write(&p, b"old").unwrap();
        replace(&p, b"new contents").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new contents");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let e = replace(&d.join("missing-dir/x.json"), b"x").unwrap_err().to_string();
        assert!(e.contains("cannot write"), "{e}");
        // Written piece by piece: the old contents until the commit, and still after a drop without one.
        let mut file = Replacement::create(&p).unwrap();
        file.write_all(b"first ").unwrap();
        file.write_all(b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new contents");
        drop(file);
        assert_eq!(std::fs::read(&p).unwrap(), b"new contents");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let mut file = Replacement::create(&p).unwrap();
        file.write_all(b"first ").unwrap();
        file.write_all(b"second").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"first second");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }
}
