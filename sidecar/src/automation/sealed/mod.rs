//! Sealed content (issue 24): what lives inside closed shadow roots, read and driven only
//! when a call asks and only as far as the human's policy (`[agent.sealed]`) allows.
//!
//! Architecture Invariant: nothing here runs unless a verb names it (`snapshot --sealed`,
//! an `sN` token); `snapshot`, `screenshot`, `navigate` and idle time do no accessibility or
//! shadow-piercing work, which the per-tab counts of [`crate::browser::cdp_counts`] show.
//! A sealed answer carries role, name, states and rect, never a value or a text body.

mod act;
mod ask;
mod capture;
mod focus_walk;
mod policy;
mod scan;
mod signature;
mod store;

pub use act::is_token;
pub use focus_walk::{WalkRequest, STEP_GAP};
pub use policy::{Lever, Policy};
pub use signature::Surface;
pub use store::Store;

use crate::automation::Automation;

impl Automation {
    fn sealed_store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.sealed.lock().unwrap_or_else(|p| p.into_inner())
    }
}
