//! Platforms without a port scan yet (macOS, Windows): every scan says so.

use std::path::Path;

use super::{Listener, Root, ScanError};

/// Always [`ScanError::Unsupported`].
pub(crate) fn scan(_proc_root: &Path, _root: Root) -> Result<Vec<Listener>, ScanError> {
    Err(ScanError::Unsupported(std::env::consts::OS))
}
