//! `[browser]`: how a port opens from a terminal's menu, and the viewport presets (built in,
//! the user's, a project's).

use serde::{Deserialize, Serialize};

use super::{Dpr, ViewportPx};

/// `[browser]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Browser {
    /// How a port opens from a terminal's menu.
    pub default_mode: RenderMode,
    /// Extra viewport presets (after the built-in ones), at most 32.
    pub viewports: Viewports,
}

/// `browser.default_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum RenderMode {
    #[default]
    Iframe,
    Screencast,
}

/// `[[browser.viewports]]`, at most 32, names unique.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "Vec<Viewport>")]
pub struct Viewports(pub Vec<Viewport>);

impl TryFrom<Vec<Viewport>> for Viewports {
    type Error = String;
    fn try_from(v: Vec<Viewport>) -> Result<Self, String> {
        if v.len() > 32 {
            return Err("browser.viewports takes at most 32 presets".into());
        }
        for (i, p) in v.iter().enumerate() {
            if v[..i].iter().any(|q| q.name == p.name) {
                return Err(format!("browser.viewports: {:?} is named twice", p.name));
            }
        }
        Ok(Viewports(v))
    }
}

/// One viewport preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Viewport {
    /// Shown in the Display menu; 1..=64 bytes of text (checked at the value's span).
    #[serde(deserialize_with = "viewport_name")]
    pub name: String,
    /// Width in CSS pixels.
    pub width: ViewportPx,
    /// Height in CSS pixels.
    pub height: ViewportPx,
    /// Device pixel ratio; default 1.
    #[serde(default = "one_dpr")]
    pub dpr: Dpr,
    /// True for a phone: the pane emulates touch and a mobile user agent (the viewport
    /// body's `mobile`, protocol §8.2); default false.
    #[serde(default)]
    pub mobile: bool,
}

/// The built-in viewport presets, in menu order (the same as the UI's `VIEWPORT_PRESETS`,
/// ui/src/screencast/viewport.ts, which the Display menu shows for panes of no project).
pub fn builtin_viewports() -> Vec<Viewport> {
    [
        ("Desktop", 1440, 900, 1.0, false),
        ("Laptop", 1280, 800, 1.0, false),
        ("Tablet", 820, 1180, 2.0, false),
        ("Phone", 390, 844, 3.0, true),
    ]
    .into_iter()
    .map(|(name, w, h, dpr, mobile)| Viewport {
        name: name.into(),
        width: ViewportPx(w),
        height: ViewportPx(h),
        dpr: Dpr(dpr),
        mobile,
    })
    .collect()
}

/// The viewport presets in force for a pane: the built-in ones, then the user's, then the
/// project's; a preset named like a lower one replaces it whole (DESIGN §14, seed 004
/// "Viewport presets"), and the replacement is listed in its own layer's place.
pub fn merge_presets(builtin: &[Viewport], user: &[Viewport], project: &[Viewport]) -> Vec<Viewport> {
    let replaced = |p: &Viewport, above: &[&[Viewport]]| above.iter().any(|l| l.iter().any(|q| q.name == p.name));
    let mut out: Vec<Viewport> = builtin.iter().filter(|p| !replaced(p, &[user, project])).cloned().collect();
    out.extend(user.iter().filter(|p| !replaced(p, &[project])).cloned());
    out.extend(project.iter().cloned());
    out
}

fn viewport_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    if name.trim().is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
        return Err(serde::de::Error::custom(format!(
            "browser.viewports: name must be 1..=64 bytes of text, got {name:?}"
        )));
    }
    Ok(name)
}

fn one_dpr() -> Dpr {
    Dpr(1.0)
}
