//! The sealed-content policy in force for one call: `[agent.sealed]` of the configuration
//! with the environment's kill switch over it (docs/config.md). Checks answer a structured
//! refusal naming the key that allows the call; nothing falls back to something weaker.

use serde_json::{json, Value};

use crate::automation::AutomationError;
use crate::config::{EnvSwitch, Sealed, SEALED_ENV};

/// The policy for one call: the file's section and the environment's switch, read once.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `[agent.sealed]` as the configuration in force says.
    pub file: Sealed,
    /// `PORTHOLE_AGENT_SEALED`.
    pub env: EnvSwitch,
}

/// A lever a call needs, with the refusal code and config key of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lever {
    /// `snapshot --sealed` and `sN` tokens: `agent.sealed.discovery`.
    Discovery,
    /// `focus-walk`: `agent.sealed.focus_walk`.
    FocusWalk,
    /// `screenshot --parts`: `agent.sealed.part_highlight`.
    PartHighlight,
}

impl Policy {
    /// The policy of `file` under the process environment's switch.
    pub fn current(file: &Sealed) -> Policy {
        Policy { file: file.clone(), env: EnvSwitch::from_env() }
    }

    /// True when the master switch is on (the file's and the environment's).
    pub fn enabled(&self) -> bool {
        self.file.enabled && !self.env.kills()
    }

    /// True when force-open is armed: `force_open` on under the master switch (the file's
    /// and the environment's), which wins over every lever.
    pub fn force_open_armed(&self) -> bool {
        self.enabled() && self.file.force_open
    }

    /// True when snapshots show closed hosts' component signatures: `signatures` on under
    /// the master switch (a SAFE lever: no refusal, the signature is just not shown).
    pub fn signatures(&self) -> bool {
        self.enabled() && self.file.signatures
    }

    /// `Ok` when a call needing `lever` is allowed; else `agent_disabled` (master off: the
    /// file's key or the environment variable named) or the lever's own refusal.
    pub fn allow(&self, lever: Lever) -> Result<(), AutomationError> {
        if self.env.kills() {
            return Err(AutomationError::PolicyRefused {
                code: "agent_disabled",
                key: SEALED_ENV,
                message: format!(
                    "sealed content is off for agents: the sidecar runs with {SEALED_ENV}={} (unset it, then restart)",
                    match &self.env {
                        EnvSwitch::Invalid(v) => v.as_str(),
                        _ => "off",
                    }
                ),
            });
        }
        if !self.file.enabled {
            return Err(refusal("agent_disabled", "agent.sealed.enabled", "sealed content is off for agents"));
        }
        match lever {
            Lever::Discovery if !self.file.discovery => {
                Err(refusal("sealed_disabled", "agent.sealed.discovery", "sealed discovery is off"))
            }
            Lever::FocusWalk if !self.file.focus_walk => {
                Err(refusal("focus_walk_disabled", "agent.sealed.focus_walk", "the focus walk is off"))
            }
            Lever::PartHighlight if !self.file.part_highlight => Err(refusal(
                "part_highlight_disabled",
                "agent.sealed.part_highlight",
                "outlining closed components' parts is off",
            )),
            _ => Ok(()),
        }
    }

    /// The policy as agents read it (`ph browser policy`, the snapshot's header): every key,
    /// the effective master switch and the environment's switch. Read-only by construction.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(&self.file).unwrap_or_else(|_| json!({}));
        v["effective_enabled"] = self.enabled().into();
        v["env"] = json!({"name": SEALED_ENV, "switch": self.env});
        v
    }
}

fn refusal(code: &'static str, key: &'static str, what: &str) -> AutomationError {
    AutomationError::PolicyRefused {
        code,
        key,
        message: format!(
            "{what} (the human's policy); it is allowed by {key} = true in config.toml (Settings → Agent access)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(p: &Policy, l: Lever) -> Option<(&'static str, &'static str)> {
        match p.allow(l) {
            Ok(()) => None,
            Err(AutomationError::PolicyRefused { code, key, .. }) => Some((code, key)),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn the_master_switch_and_the_environment_win_over_every_lever() {
        let mut p = Policy { file: Sealed::default(), env: EnvSwitch::Unset };
        assert_eq!(code(&p, Lever::Discovery), None);
        p.file.discovery = false;
        assert_eq!(code(&p, Lever::Discovery), Some(("sealed_disabled", "agent.sealed.discovery")));
        assert_eq!(code(&p, Lever::FocusWalk), None);
        p.file.focus_walk = false;
        assert_eq!(code(&p, Lever::FocusWalk), Some(("focus_walk_disabled", "agent.sealed.focus_walk")));
        assert_eq!(
            code(&p, Lever::PartHighlight),
            Some(("part_highlight_disabled", "agent.sealed.part_highlight")),
            "off by default"
        );
        p.file = Sealed { enabled: false, ..Sealed::default() };
        assert_eq!(code(&p, Lever::Discovery), Some(("agent_disabled", "agent.sealed.enabled")));
        p.file = Sealed::default();
        p.env = EnvSwitch::Off;
        assert_eq!(code(&p, Lever::Discovery), Some(("agent_disabled", SEALED_ENV)));
        assert_eq!(p.to_json()["effective_enabled"], false);
        assert_eq!(p.to_json()["enabled"], true, "the file's value is shown as it is");
        p.file.force_open = true;
        assert!(!p.force_open_armed(), "the environment disarms force-open");
        p.env = EnvSwitch::Unset;
        assert!(p.force_open_armed());
        p.file.enabled = false;
        assert!(!p.force_open_armed(), "the master switch disarms force-open");
    }
}
