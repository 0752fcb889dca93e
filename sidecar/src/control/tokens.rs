//! Pane tokens (protocol §9.1): one per terminal, naming its pane, revoked when the terminal
//! ends. The table owns the tokens; nothing else stores or logs them.

use std::collections::HashMap;
use std::sync::Mutex;

use super::handle::Handle;
use crate::pty::TerminalId;
use crate::secret::random_hex_256;

/// Who a valid pane token speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneCaller {
    /// The pane the token names.
    pub pane: Handle,
    /// The terminal it was minted for; the token lives exactly as long as it.
    pub terminal: TerminalId,
}

/// What checking a bearer value against the table found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenCheck {
    /// Not a pane token (it may still be the master token).
    Unknown,
    /// A pane token whose terminal has ended.
    Revoked,
    /// A live pane token.
    Live(PaneCaller),
}

/// Every pane token minted by this sidecar, live or revoked. Revoked ones are kept (they are
/// 64 bytes each) so that their holders are told "revoked" rather than "wrong".
#[derive(Default)]
pub struct Tokens {
    inner: Mutex<HashMap<String, (PaneCaller, bool)>>,
}

impl Tokens {
    /// Mints a token for `pane`'s terminal `terminal`. Errors only if the OS CSPRNG fails.
    pub fn mint(&self, pane: Handle, terminal: TerminalId) -> Result<String, getrandom::Error> {
        let token = random_hex_256()?;
        self.lock().insert(token.clone(), (PaneCaller { pane, terminal }, true));
        Ok(token)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (PaneCaller, bool)>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks `bearer`. `alive(terminal)` says whether the token's terminal still runs; a
    /// token found dead is revoked for good. Lookup is by hash map (the token is 256 bits
    /// of entropy, so a timing side channel on the lookup reveals nothing useful).
    pub fn check(&self, bearer: &str, alive: impl Fn(TerminalId) -> bool) -> TokenCheck {
        let mut map = self.lock();
        let Some((caller, live)) = map.get_mut(bearer) else { return TokenCheck::Unknown };
        if *live && !alive(caller.terminal) {
            *live = false;
        }
        if *live {
            TokenCheck::Live(*caller)
        } else {
            TokenCheck::Revoked
        }
    }

    /// Revokes every token minted for `terminal` (it was deleted or its child reaped).
    pub fn revoke_terminal(&self, terminal: TerminalId) {
        for (caller, live) in self.lock().values_mut() {
            if caller.terminal == terminal {
                *live = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_live_until_its_terminal_ends_then_revoked_for_good() {
        let t = Tokens::default();
        let pane: Handle = "t1".parse().unwrap();
        let tok = t.mint(pane, TerminalId(1)).unwrap();
        assert_eq!(tok.len(), 64);
        assert_eq!(t.check(&tok, |_| true), TokenCheck::Live(PaneCaller { pane, terminal: TerminalId(1) }));
        assert_eq!(t.check(&tok, |_| false), TokenCheck::Revoked);
        assert_eq!(t.check(&tok, |_| true), TokenCheck::Revoked, "never comes back");
        assert_eq!(t.check("nope", |_| true), TokenCheck::Unknown);
        let tok2 = t.mint(pane, TerminalId(2)).unwrap();
        t.revoke_terminal(TerminalId(2));
        assert_eq!(t.check(&tok2, |_| true), TokenCheck::Revoked);
    }
}
