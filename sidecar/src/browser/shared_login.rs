//! Shared login (issue 26 item 2): the browsers of one sidecar that are not isolated share
//! their cookies, as the tabs of one desktop browser do, so a login done in one pane is seen
//! in every other (two agents on one app log in once). Each browser keeps its own Chromium,
//! profile, tabs and viewport; only cookies travel.
//!
//! How: the group keeps a jar (the cookies as last agreed) and, per member, the cookies last
//! seen there. A sync from member M reads M's cookies (`Storage.getCookies`), takes what
//! changed since M was last seen (added, changed, removed) into the jar, and writes those
//! changes into every other live member (`Storage.setCookies`; a removal is written as the
//! same cookie already expired, which deletes it, RFC 6265 §5.3 step 11). Syncs are queued
//! one at a time, so two members' changes never interleave. A sync runs:
//! - soon after M loads a document or answers a fetch/XHR (a `Set-Cookie` can only arrive
//!   with a response), and once a second while M is viewed (a script's `document.cookie`);
//! - from every member before M starts a navigation or opens a tab ([`LoginGroup::flush`]),
//!   so a navigation Porthole starts carries every cookie the others have at that moment;
//! - into M at its launch: the jar's cookies are set before its first navigation.
//!
//! Local and session storage are not shared (Chromium's DOMStorage domain can write only into
//! a document of that origin that is open in the browser): a login kept in `localStorage`
//! is per pane. Documented in docs/protocol.md §8.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::network::{Cookie, CookieParam, TimeSinceEpoch};
use futures_util::future::BoxFuture;

use super::BrowserError;

/// What the group needs of a member browser whose Chromium is up: its cookie store.
pub(super) trait CookieStore: Send + Sync {
    /// Every cookie (`Storage.getCookies`).
    fn read(&self) -> BoxFuture<'_, Result<Vec<Cookie>, BrowserError>>;
    /// Sets these cookies (`Storage.setCookies`).
    fn write(&self, cookies: Vec<CookieParam>) -> BoxFuture<'_, Result<(), BrowserError>>;
}

/// A member as the group holds it: its cookie store while its Chromium is up, else `None`
/// (a closure over a weak handle, so the group neither keeps a browser alive nor names its
/// type).
pub(super) type Live = Box<dyn Fn() -> Option<Box<dyn CookieStore>> + Send + Sync>;

/// A cookie read with `Storage.getCookies` as `Storage.setCookies` takes it back: every
/// field kept; a session cookie (no expiry) stays a session cookie, and a host-only cookie
/// (its domain has no leading dot) stays host-only: it is given by URL, since a `domain`
/// would make it a domain cookie, sent to subdomains too (RFC 6265 §5.3 step 6) and left
/// behind by a logout that clears the host-only one.
pub(super) fn cookie_param(c: &Cookie) -> CookieParam {
    let mut p = CookieParam::new(c.name.clone(), c.value.clone());
    if c.domain.starts_with('.') {
        p.domain = Some(c.domain.clone());
    } else {
        let scheme = if c.secure { "https" } else { "http" };
        p.url = Some(format!("{scheme}://{}{}", c.domain, c.path));
    }
    p.path = Some(c.path.clone());
    p.secure = Some(c.secure);
    p.http_only = Some(c.http_only);
    p.same_site = c.same_site.clone();
    p.expires = if c.session { None } else { Some(TimeSinceEpoch::new(c.expires)) };
    p.priority = Some(c.priority.clone());
    p.source_scheme = Some(c.source_scheme.clone());
    p.source_port = Some(c.source_port);
    p.partition_key = c.partition_key.clone();
    p
}

/// How long a member's burst of responses is left to settle before its cookies are read, in
/// milliseconds (a page's load answers many requests; one read covers them).
const SYNC_SETTLE_MS: u64 = 60;
/// Bound on one member's cookie read or write, in milliseconds: a busy or hung Chromium
/// delays another browser's navigation by at most this much (it is skipped, and logged).
const SYNC_CALL_MS: u64 = 1_000;

/// A cookie's identity in a cookie store: name, domain, path and partition (RFC 6265 §5.3
/// step 11 replaces a cookie with the same name, domain and path; CHIPS adds the partition).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CookieKey {
    name: String,
    domain: String,
    path: String,
    partition: String,
}

fn key_of(c: &Cookie) -> CookieKey {
    CookieKey {
        name: c.name.clone(),
        domain: c.domain.clone(),
        path: c.path.clone(),
        partition: c.partition_key.as_ref().map(|p| serde_json::to_string(p).unwrap_or_default()).unwrap_or_default(),
    }
}

/// True if and only if `a` and `b` would be the same cookie once set (`size` and Chromium's
/// sub-second expiry rounding ignored).
fn same(a: &Cookie, b: &Cookie) -> bool {
    a.value == b.value
        && a.secure == b.secure
        && a.http_only == b.http_only
        && a.session == b.session
        && a.same_site == b.same_site
        && (a.session || (a.expires - b.expires).abs() < 1.0)
}

/// What one member changed since it was last seen.
#[derive(Debug, Default, PartialEq)]
struct Changes {
    set: Vec<Cookie>,
    removed: Vec<Cookie>,
}

impl Changes {
    fn is_empty(&self) -> bool {
        self.set.is_empty() && self.removed.is_empty()
    }

    /// The `Storage.setCookies` parameters that bring another store to these changes.
    fn params(&self) -> Vec<CookieParam> {
        let mut out: Vec<CookieParam> = self.set.iter().map(cookie_param).collect();
        for c in &self.removed {
            let mut p = cookie_param(c);
            // An expiry in the past deletes the cookie of that name, domain and path.
            p.expires = Some(TimeSinceEpoch::new(1.0));
            out.push(p);
        }
        out
    }
}

/// The cookies `now` differs by from `seen`.
fn diff(seen: &HashMap<CookieKey, Cookie>, now: &[Cookie]) -> Changes {
    let mut ch = Changes::default();
    let mut keys = std::collections::HashSet::new();
    for c in now {
        let k = key_of(c);
        if seen.get(&k).is_none_or(|s| !same(s, c)) {
            ch.set.push(c.clone());
        }
        keys.insert(k);
    }
    ch.removed = seen.iter().filter(|(k, _)| !keys.contains(*k)).map(|(_, c)| c.clone()).collect();
    ch
}

/// Applies `ch` to `store` (a member's last-seen cookies, or the jar).
fn apply(store: &mut HashMap<CookieKey, Cookie>, ch: &Changes) {
    for c in &ch.set {
        store.insert(key_of(c), c.clone());
    }
    for c in &ch.removed {
        store.remove(&key_of(c));
    }
}

struct Member {
    browser: Arc<Live>,
    /// The cookies last read from or written into it; `None` until its first launch is live.
    seen: Option<HashMap<CookieKey, Cookie>>,
    /// A sync from it is scheduled ([`LoginGroup::sync_soon`]).
    pending: bool,
}

#[derive(Default)]
struct State {
    jar: HashMap<CookieKey, Cookie>,
    members: HashMap<String, Member>,
}

/// The browsers that share a login, and the cookies they agreed on. One per [`super::Host`].
#[derive(Default)]
pub struct LoginGroup {
    state: Mutex<State>,
    /// One sync at a time (tokio's mutex is fair: syncs run in arrival order).
    turn: tokio::sync::Mutex<()>,
}

impl LoginGroup {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds browser `id` to the group (before its first launch).
    pub(super) fn join(&self, id: &str, browser: Live) {
        self.state().members.insert(id.to_string(), Member { browser: Arc::new(browser), seen: None, pending: false });
    }

    /// Removes browser `id` (closed); the jar keeps what it brought.
    pub(super) fn leave(&self, id: &str) {
        self.state().members.remove(id);
    }

    /// The ids of the members, sorted.
    pub fn members(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.state().members.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// The cookies a launch of member `id` starts with: `carried` (its own, read before a
    /// relaunch) overlaid with the jar's after every other member was synced, so it starts
    /// with the group's login. Its last-seen state is cleared: the first sync after the launch
    /// takes what its profile had that the group did not.
    pub(super) async fn for_launch(&self, id: &str, carried: Vec<Cookie>) -> Vec<Cookie> {
        self.flush(Some(id)).await;
        let mut s = self.state();
        if let Some(m) = s.members.get_mut(id) {
            m.seen = None;
        }
        let mut out: HashMap<CookieKey, Cookie> = carried.into_iter().map(|c| (key_of(&c), c)).collect();
        out.extend(s.jar.iter().map(|(k, c)| (k.clone(), c.clone())));
        out.into_values().collect()
    }

    /// Schedules a sync from member `id` [`SYNC_SETTLE_MS`] from now, unless one is already
    /// scheduled (a burst of responses costs one read).
    pub(super) fn sync_soon(self: &Arc<Self>, id: &str) {
        {
            let mut s = self.state();
            let Some(m) = s.members.get_mut(id) else { return };
            if m.pending {
                return;
            }
            m.pending = true;
        }
        let group = Arc::downgrade(self);
        let id = id.to_string();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(SYNC_SETTLE_MS)).await;
            if let Some(g) = Weak::upgrade(&group) {
                g.sync_from(&id).await;
            }
        });
    }

    /// Syncs from every member but `except`, in turn: afterwards every live member has every
    /// cookie any of them had when the flush began.
    pub(super) async fn flush(&self, except: Option<&str>) {
        for id in self.members().into_iter().filter(|m| Some(m.as_str()) != except) {
            self.sync_from(&id).await;
        }
    }

    /// Reads member `id`'s cookies, takes what it changed into the jar and writes that into
    /// every other live member. A member whose Chromium is not live, or whose read fails, is
    /// skipped (logged); nothing is half-written into the jar.
    pub(super) async fn sync_from(&self, id: &str) {
        let _turn = self.turn.lock().await;
        let browser = {
            let mut s = self.state();
            let Some(m) = s.members.get_mut(id) else { return };
            m.pending = false;
            m.browser.clone()
        };
        let Some(browser) = browser() else { return };
        let bound = Duration::from_millis(SYNC_CALL_MS);
        let now = match tokio::time::timeout(bound, browser.read()).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return tracing::debug!(browser = id, "shared login: reading cookies: {e}"),
            Err(_) => return tracing::warn!(browser = id, "shared login: reading cookies took over {SYNC_CALL_MS} ms"),
        };
        // What changed there, and of that, what the jar does not have yet.
        let (news, others) = {
            let mut s = self.state();
            let State { jar, members } = &mut *s;
            let Some(m) = members.get_mut(id) else { return };
            let first = m.seen.is_none();
            let ch = diff(m.seen.as_ref().unwrap_or(&HashMap::new()), &now);
            m.seen = Some(now.iter().map(|c| (key_of(c), c.clone())).collect());
            let news = Changes {
                set: ch.set.into_iter().filter(|c| jar.get(&key_of(c)).is_none_or(|j| !same(j, c))).collect(),
                // A member's first read after its launch removes nothing: what its profile
                // lacks is what the group gave it, or the group's own removals.
                removed: if first {
                    Vec::new()
                } else {
                    ch.removed.into_iter().filter(|c| jar.contains_key(&key_of(c))).collect()
                },
            };
            apply(jar, &news);
            let others: Vec<(String, Arc<Live>)> =
                members.iter().filter(|(k, _)| k.as_str() != id).map(|(k, m)| (k.clone(), m.browser.clone())).collect();
            (news, others)
        };
        if news.is_empty() {
            return;
        }
        tracing::debug!(browser = id, set = news.set.len(), removed = news.removed.len(), "shared login: sync");
        let params = news.params();
        for (other, weak) in others {
            let Some(b) = weak() else { continue };
            match tokio::time::timeout(bound, b.write(params.clone()))
                .await
                .unwrap_or(Err(BrowserError::Cdp(format!("Storage.setCookies took over {SYNC_CALL_MS} ms"))))
            {
                Ok(()) => {
                    let mut s = self.state();
                    if let Some(seen) = s.members.get_mut(&other).and_then(|m| m.seen.as_mut()) {
                        apply(seen, &news);
                    }
                }
                Err(e) => tracing::debug!(browser = other, "shared login: writing cookies: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie(name: &str, value: &str) -> Cookie {
        serde_json::from_value(serde_json::json!({
            "name": name, "value": value, "domain": "127.0.0.1", "path": "/", "expires": -1.0,
            "size": 4, "httpOnly": true, "secure": false, "session": true, "priority": "Medium",
            "sameParty": false, "sourceScheme": "NonSecure", "sourcePort": 8000
        }))
        .expect("a cookie")
    }

    #[test]
    fn a_diff_names_what_was_added_changed_and_removed() {
        let seen: HashMap<CookieKey, Cookie> =
            [cookie("a", "1"), cookie("b", "1"), cookie("c", "1")].into_iter().map(|c| (key_of(&c), c)).collect();
        let ch = diff(&seen, &[cookie("a", "1"), cookie("b", "2"), cookie("d", "1")]);
        let names = |v: &[Cookie]| {
            let mut n: Vec<String> = v.iter().map(|c| format!("{}={}", c.name, c.value)).collect();
            n.sort();
            n
        };
        assert_eq!(names(&ch.set), ["b=2", "d=1"]);
        assert_eq!(names(&ch.removed), ["c=1"]);
        let mut store = seen.clone();
        apply(&mut store, &ch);
        let mut all: Vec<String> = store.values().map(|c| format!("{}={}", c.name, c.value)).collect();
        all.sort();
        assert_eq!(all, ["a=1", "b=2", "d=1"]);
    }

    #[test]
    fn a_removal_is_written_as_the_same_cookie_already_expired() {
        let ch = Changes { set: vec![cookie("a", "2")], removed: vec![cookie("b", "1")] };
        let p = ch.params();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].expires, None, "a session cookie stays one");
        assert_eq!((p[1].name.as_str(), p[1].expires.as_ref().map(|e| *e.inner())), ("b", Some(1.0)));
    }
}
