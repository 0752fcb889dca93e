//! The links by id (`r1`, `r2`, …, at most 16), owned by the API's state.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use super::host::SshHost;
use super::link::{Link, LinkError, LinkOptions};

/// Most links at once.
pub const MAX_REMOTES: usize = 16;

/// Every remote link of this sidecar.
pub struct Remotes {
    opts: LinkOptions,
    links: Mutex<BTreeMap<u32, Arc<Link>>>,
    next: AtomicU32,
}

impl Remotes {
    /// No links yet; new ones start ssh as `opts` says.
    pub fn new(opts: LinkOptions) -> Remotes {
        Remotes { opts, links: Mutex::new(BTreeMap::new()), next: AtomicU32::new(1) }
    }

    fn links(&self) -> std::sync::MutexGuard<'_, BTreeMap<u32, Arc<Link>>> {
        self.links.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Connects a new link to `host` and returns its id. Errors: [`LinkError::BadHost`]
    /// (nothing spawned), [`LinkError::TooMany`], or the first connect's error (nothing kept).
    pub async fn add(&self, host: &str) -> Result<(String, Arc<Link>), LinkError> {
        let host = SshHost::parse(host).map_err(LinkError::BadHost)?;
        if self.links().len() >= MAX_REMOTES {
            return Err(LinkError::TooMany);
        }
        let link = Link::connect(host, self.opts.clone()).await?;
        let mut links = self.links();
        if links.len() >= MAX_REMOTES {
            link.close();
            return Err(LinkError::TooMany);
        }
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        links.insert(n, link.clone());
        Ok((format!("r{n}"), link))
    }

    fn number(id: &str) -> Option<u32> {
        id.strip_prefix('r')?.parse().ok()
    }

    /// The link `id`, if it exists.
    pub fn get(&self, id: &str) -> Option<Arc<Link>> {
        self.links().get(&Self::number(id)?).cloned()
    }

    /// Every link with its id, in id order.
    pub fn list(&self) -> Vec<(String, Arc<Link>)> {
        self.links().iter().map(|(n, l)| (format!("r{n}"), l.clone())).collect()
    }

    /// Removes link `id` (not closed: the caller closes it, after a hangup if asked).
    pub fn remove(&self, id: &str) -> Option<Arc<Link>> {
        self.links().remove(&Self::number(id)?)
    }

    /// Closes every link (at shutdown): no ssh is left running.
    pub fn close_all(&self) {
        for (_, l) in std::mem::take(&mut *self.links()) {
            l.close();
        }
    }
}
