//! `[agent]`: what an agent driving a browser pane may do. Today one section, `[agent.sealed]`
//! (issue 24): the human's policy for content inside closed shadow roots. Every lever has a
//! tier (SAFE: reads only; VISIBLE: the page or the user can notice it; RISKY: changes page
//! semantics) which the Settings panel shows; the sidecar enforces the policy on every call.

use serde::{Deserialize, Serialize};

/// `[agent]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Agent {
    /// `network --id` and `--har` show the values of `Authorization`, `Cookie`, `Set-Cookie`
    /// and `Proxy-Authorization` (else `[redacted]`). Only the human sets it.
    pub show_secrets: bool,
    /// `[agent.sealed]`.
    pub sealed: Sealed,
}

/// `[agent.sealed]`: the policy for closed shadow roots (docs/config.md). A lever is a
/// permission, never a behaviour: nothing runs until a call asks for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sealed {
    /// Master switch; off refuses every sealed call with `agent_disabled`.
    pub enabled: bool,
    /// SAFE: `snapshot --sealed` lists closed-root controls; off → `sealed_disabled`.
    pub discovery: bool,
    /// SAFE: a closed host's component signature (tag, parts, custom properties) is shown.
    pub signatures: bool,
    /// VISIBLE (moves focus): `focus-walk`; off → `focus_walk_disabled`.
    pub focus_walk: bool,
    /// Most Tab presses one focus walk may send, 1..=64.
    pub focus_walk_max_steps: FocusWalkSteps,
    /// Put focus back where it was when a focus walk fails.
    pub focus_walk_restore: bool,
    /// VISIBLE (a style rule the page can read): outlines exported parts before a screenshot.
    pub part_highlight: bool,
    /// RISKY: `attachShadow` is made open for the pane's next documents.
    pub force_open: bool,
    /// Most frames one sealed scan reads, 1..=64; more → `frames_limit`.
    pub max_frames: MaxFrames,
    /// Most sealed controls one answer lists, 1..=2000.
    pub max_controls: MaxControls,
    /// Longest side of a sealed crop in CSS pixels, 64..=4096.
    pub crop_max_side: CropMaxSide,
    /// Sealed scans per tab per minute, 1..=120; more → `rate_limited` with `retry_after`.
    pub scans_per_minute: ScansPerMinute,
}

impl Default for Sealed {
    fn default() -> Self {
        Sealed {
            enabled: true,
            discovery: true,
            signatures: true,
            focus_walk: true,
            focus_walk_max_steps: FocusWalkSteps(8),
            focus_walk_restore: true,
            part_highlight: false,
            force_open: false,
            max_frames: MaxFrames(16),
            max_controls: MaxControls(200),
            crop_max_side: CropMaxSide(1024),
            scans_per_minute: ScansPerMinute(6),
        }
    }
}

bounded!(
    /// `agent.sealed.focus_walk_max_steps`: Tab presses per focus walk.
    FocusWalkSteps(u32) from "u32", 1, 64, "agent.sealed.focus_walk_max_steps"
);
bounded!(
    /// `agent.sealed.max_frames`: frames per sealed scan.
    MaxFrames(u32) from "u32", 1, 64, "agent.sealed.max_frames"
);
bounded!(
    /// `agent.sealed.max_controls`: sealed controls per answer.
    MaxControls(u32) from "u32", 1, 2000, "agent.sealed.max_controls"
);
bounded!(
    /// `agent.sealed.crop_max_side`: CSS pixels.
    CropMaxSide(u32) from "u32", 64, 4096, "agent.sealed.crop_max_side"
);
bounded!(
    /// `agent.sealed.scans_per_minute`: sealed scans per tab per minute.
    ScansPerMinute(u32) from "u32", 1, 120, "agent.sealed.scans_per_minute"
);

/// The environment variable whose value `off` turns the master switch off whatever the file
/// says (for CI and headless runs).
pub const SEALED_ENV: &str = "PORTHOLE_AGENT_SEALED";

/// What [`SEALED_ENV`] says, parsed once per read of the policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "value")]
pub enum EnvSwitch {
    /// Unset or empty: the file decides.
    Unset,
    /// `on`: the file decides (written for symmetry; it cannot turn the master on).
    On,
    /// `off`: the master switch is off.
    Off,
    /// Any other value. Treated as `off`: a kill switch misspelt must not arm anything.
    Invalid(String),
}

impl EnvSwitch {
    /// Parses the variable's value (`None`: unset). Case-insensitive; surrounding blanks ignored.
    pub fn parse(v: Option<&str>) -> EnvSwitch {
        match v.map(str::trim) {
            None | Some("") => EnvSwitch::Unset,
            Some(s) if s.eq_ignore_ascii_case("on") => EnvSwitch::On,
            Some(s) if s.eq_ignore_ascii_case("off") => EnvSwitch::Off,
            Some(s) => EnvSwitch::Invalid(s.chars().take(64).collect()),
        }
    }

    /// Reads [`SEALED_ENV`] from the process environment.
    pub fn from_env() -> EnvSwitch {
        let v = std::env::var_os(SEALED_ENV).map(|v| v.to_string_lossy().into_owned());
        EnvSwitch::parse(v.as_deref())
    }

    /// True when the switch turns the master off.
    pub fn kills(&self) -> bool {
        matches!(self, EnvSwitch::Off | EnvSwitch::Invalid(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_env_switch_is_parsed_and_anything_but_on_or_unset_kills() {
        assert_eq!(EnvSwitch::parse(None), EnvSwitch::Unset);
        assert_eq!(EnvSwitch::parse(Some(" ")), EnvSwitch::Unset);
        assert_eq!(EnvSwitch::parse(Some("ON")), EnvSwitch::On);
        assert_eq!(EnvSwitch::parse(Some("off")), EnvSwitch::Off);
        assert_eq!(EnvSwitch::parse(Some("0")), EnvSwitch::Invalid("0".into()));
        assert!(!EnvSwitch::Unset.kills() && !EnvSwitch::On.kills());
        assert!(EnvSwitch::Off.kills() && EnvSwitch::Invalid("no".into()).kills());
    }
}
