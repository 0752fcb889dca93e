//! Component signatures (issue 24 item 6, lever `agent.sealed.signatures`, SAFE): a short,
//! stable hash of what a closed shadow host shows the page around it. Its surface is
//! page-visible by design: the host's tag, whether it is a defined custom element
//! (`:defined`), the custom properties set on the host (names only: a theme's values may
//! change, its hooks do not), and the `part` / `exportparts` names of the host and of its
//! closed tree (CSS Shadow Parts, the names a page's `::part()` rules style). Read from the
//! walk (`outline.js`, the host's computed style) and the DOM snapshot every `snapshot`
//! already takes: no shadow-piercing or accessibility read is added.
//!
//! The same component re-rendered (new nodes, same parts) keeps its signature; renaming a
//! part, exporting another, or a new tag changes it. Order does not count: each list is
//! sorted and deduplicated before hashing.

use std::collections::BTreeSet;

/// What a closed host shows of itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surface {
    /// Its tag, lower case (`x-login`).
    pub tag: String,
    /// `Some(true)` for a defined custom element, `Some(false)` for one not (yet) defined,
    /// `None` when the walk did not read it (a built-in element hosting the root).
    pub defined: Option<bool>,
    /// Custom properties set on the host (`--brand`), names only.
    pub vars: Vec<String>,
    /// `part=…` / `exportparts=…` attributes of the host and of its closed tree.
    pub parts: Vec<String>,
}

impl Surface {
    /// The signature: 8 lower-case hex digits (FNV-1a, 64 bits, folded to 32) of the
    /// surface's canonical text.
    pub fn signature(&self) -> String {
        let tokens = |v: &[String]| -> Vec<String> {
            v.iter()
                .flat_map(|s| {
                    // `part=a b` and `exportparts=x: y, z` name parts by whitespace- and
                    // comma-separated tokens.
                    let (k, rest) = s.split_once('=').unwrap_or(("", s));
                    rest.split(|c: char| c == ',' || c.is_whitespace())
                        .filter(|t| !t.is_empty())
                        .map(move |t| format!("{k}:{t}"))
                        .collect::<Vec<_>>()
                })
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        let vars: BTreeSet<&String> = self.vars.iter().collect();
        let text = format!(
            "{}|{}|{}|{}",
            self.tag.to_ascii_lowercase(),
            match self.defined {
                Some(true) => "defined",
                Some(false) => "undefined",
                None => "builtin",
            },
            vars.into_iter().cloned().collect::<Vec<_>>().join(","),
            tokens(&self.parts).join(","),
        );
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{:08x}", (h ^ (h >> 32)) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface(parts: &[&str], vars: &[&str]) -> Surface {
        Surface {
            tag: "x-login".into(),
            defined: Some(true),
            vars: vars.iter().map(|s| s.to_string()).collect(),
            parts: parts.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_signature_follows_the_surface_and_not_its_order() {
        let a = surface(&["part=field label", "part=button"], &["--brand", "--gap"]);
        let reordered = surface(&["part=button", "part=label  field", "part=button"], &["--gap", "--brand"]);
        assert_eq!(a.signature(), reordered.signature(), "a re-render in another order");
        assert_eq!(a.signature().len(), 8);
        let renamed = surface(&["part=field caption", "part=button"], &["--brand", "--gap"]);
        assert_ne!(a.signature(), renamed.signature(), "a part renamed");
        let exported = surface(&["part=field label", "part=button", "exportparts=inner: outer"], &["--brand", "--gap"]);
        assert_ne!(a.signature(), exported.signature(), "a part exported");
        assert_ne!(a.signature(), surface(&["part=field label", "part=button"], &["--brand"]).signature());
        let undefined = Surface { defined: Some(false), ..a.clone() };
        assert_ne!(a.signature(), undefined.signature(), "defined or not");
        assert_ne!(a.signature(), Surface { tag: "x-signup".into(), ..a.clone() }.signature());
    }
}
