//! Builds made once per content: a directory named by the hash of everything that goes into
//! it, built in a temporary sibling and renamed into place, so a directory that exists is whole
//! and is used from then on. The Verilator tier's models ([`crate::verilator`]) and the
//! SUME-level simulation (`emu_fpga::sim`) are cached this way, side by side.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// The cache's directory for `kind` of build (`verilator`, `sume-sim`): `$EMU_CACHE_DIR/KIND`,
/// else `$XDG_CACHE_HOME/emu/KIND`, else `$HOME/.cache/emu/KIND`, else `emu-cache/KIND` in the
/// temporary directory.
pub fn root(kind: &str) -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("EMU_CACHE_DIR") {
        return dir.join(kind);
    }
    if let Some(dir) = var("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return dir.join("emu").join(kind);
    }
    if let Some(home) = var("HOME") {
        return home.join(".cache").join("emu").join(kind);
    }
    std::env::temp_dir().join("emu-cache").join(kind)
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and Rust version.
#[derive(Debug, Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Adds `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Adds `bytes` preceded by their length, so consecutive parts cannot run together.
    pub fn part(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// `root/name` once it holds `marker`: found (true), or made by `build` (false) in a new
/// temporary sibling directory, logged to its `build.log`, and renamed into place, so a
/// directory that exists is whole. One process builds while any others wait (a lock file
/// `.name.lock`); a lock whose process is gone, or older than an hour, is taken over.
pub fn cached_dir(
    root: &Path,
    name: &str,
    marker: &str,
    build: impl Fn(&Path, &mut String) -> Result<(), String>,
) -> Result<(PathBuf, bool), String> {
    std::fs::create_dir_all(root).map_err(|e| format!("cannot create the cache {}: {e}", root.display()))?;
    let dir = root.join(name);
    let lock_path = root.join(format!(".{name}.lock"));
    let mut waited = Duration::ZERO;
    let mut cached = true;
    while !dir.join(marker).exists() {
        let Some(_lock) = BuildLock::try_take(&lock_path)? else {
            if waited > Duration::from_secs(1800) {
                return Err(format!("waited 30 minutes for another build of {}", dir.display()));
            }
            std::thread::sleep(Duration::from_millis(100));
            waited += Duration::from_millis(100);
            continue;
        };
        if dir.join(marker).exists() {
            break; // built while this process waited for the lock
        }
        // Temporary directories of builds that died: no one else builds `name` now.
        let prefix = format!(".{name}.tmp-");
        for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let tmp = root.join(format!(".{name}.tmp-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
        let mut log = String::new();
        let result = build(&tmp, &mut log);
        if let Err(e) = &result {
            log.push_str(&format!("FAILED: {e}\n"));
        }
        let logged = std::fs::write(tmp.join("build.log"), &log);
        if let Err(e) = result {
            return Err(format!("{e}\n(the whole log: {})", tmp.join("build.log").display()));
        }
        logged.map_err(|e| format!("cannot write {}: {e}", tmp.join("build.log").display()))?;
        if dir.exists() {
            // Without its marker: the remains of something else.
            let _ = std::fs::remove_dir_all(&dir);
        }
        std::fs::rename(&tmp, &dir).map_err(|e| format!("cannot move {} to {}: {e}", tmp.display(), dir.display()))?;
        cached = false;
    }
    Ok((dir, cached))
}

/// A build's lock file, removed when dropped.
struct BuildLock(PathBuf);

impl Drop for BuildLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl BuildLock {
    /// Takes the lock at `path`, or `None` when a live builder holds it. A lock whose process
    /// is gone, or older than an hour, is stale: removed, to be taken at the next try.
    fn try_take(path: &Path) -> Result<Option<BuildLock>, String> {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(mut f) => {
                use std::io::Write;
                let _ = writeln!(f, "{}", std::process::id());
                Ok(Some(BuildLock(path.to_path_buf())))
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                // A lock just made may not have its pid yet: only a pid known dead, or age,
                // makes it stale.
                let pid = std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse::<u32>().ok());
                let gone = pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists());
                let old = std::fs::metadata(path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .is_some_and(|age| age > Duration::from_secs(3600));
                if gone || old {
                    let _ = std::fs::remove_file(path);
                }
                Ok(None)
            }
            Err(e) => Err(format!("cannot create the build lock {}: {e}", path.display())),
        }
    }
}
