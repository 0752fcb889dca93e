//! `ph skill`: a concise guide for coding agents (`skill.md`), also `ph mcp`'s
//! instructions. A test checks it against the clap definitions: every verb it names exists,
//! and every verb is named, so it cannot drift.

/// The guide.
pub const GUIDE: &str = include_str!("skill.md");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verbs;

    /// Every `ph WORD`, `ph browser WORD` and `ph workspace WORD` the guide names, as word lists.
    fn named() -> Vec<Vec<String>> {
        let re = regex::Regex::new(r"`ph (browser |workspace )?([a-z][a-z-]*)").unwrap();
        re.captures_iter(GUIDE)
            .map(|c| {
                let mut w = Vec::new();
                if let Some(group) = c.get(1) {
                    w.push(group.as_str().trim().to_string());
                }
                w.push(c[2].to_string());
                w
            })
            .collect()
    }

    #[test]
    fn every_verb_named_in_the_guide_exists() {
        let all = verbs::all();
        for w in named() {
            let exists = all.iter().any(|v| v.words == w) || (w.len() == 1 && verbs::LOCAL.contains(&w[0].as_str()));
            let group = w == ["browser"];
            assert!(exists || group, "the guide names `ph {}`, which is no verb", w.join(" "));
        }
    }

    #[test]
    fn every_verb_is_in_the_guide() {
        let named = named();
        for v in verbs::all() {
            assert!(named.contains(&v.words), "`ph {}` is missing from skill.md", v.words.join(" "));
        }
    }
}
