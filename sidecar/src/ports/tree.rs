//! Which processes belong to a pane: pure, over a snapshot of `(pid, Stat)` records.

use std::collections::{HashMap, VecDeque};

use super::parse::Stat;
use super::Root;

/// Depth given to a process that is in the root's session but no longer in its tree
/// (it double-forked and was re-parented to init or a subreaper).
pub(crate) const SESSION_ONLY_DEPTH: u32 = u32::MAX;

/// The pane's processes as `(pid, depth)`, root first, in breadth-first order, then the
/// session-only members in pid order:
///
/// - when `root.tree` is true, `root.pid` (if present in `procs`) and all its descendants
///   by `ppid`, at depth 0, 1, 2, …;
/// - every other non-zombie process whose session id is `root.pid` (the child is a
///   session leader), at [`SESSION_ONLY_DEPTH`]. A process that called `setsid(2)` *and*
///   left the tree is in neither set: nothing ties it to the pane any more.
///
/// Zombies are left out (they hold no fds).
pub(crate) fn members(root: Root, procs: &[(i32, Stat)]) -> Vec<(i32, u32)> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for &(pid, st) in procs {
        children.entry(st.ppid).or_default().push(pid);
    }
    let live: HashMap<i32, Stat> = procs.iter().copied().filter(|(_, st)| st.state != 'Z').collect();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    if root.tree && procs.iter().any(|(p, _)| *p == root.pid) {
        let mut queue = VecDeque::from([(root.pid, 0u32)]);
        seen.insert(root.pid);
        while let Some((pid, depth)) = queue.pop_front() {
            if live.contains_key(&pid) {
                out.push((pid, depth));
            }
            for &c in children.get(&pid).map(Vec::as_slice).unwrap_or(&[]) {
                if seen.insert(c) {
                    queue.push_back((c, depth.saturating_add(1)));
                }
            }
        }
    }
    let mut session_only: Vec<i32> =
        live.iter().filter(|(pid, st)| st.session == root.pid && !seen.contains(pid)).map(|(pid, _)| *pid).collect();
    session_only.sort_unstable();
    out.extend(session_only.into_iter().map(|p| (p, SESSION_ONLY_DEPTH)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, session: i32) -> (i32, Stat) {
        (pid, Stat { state: 'S', ppid, session })
    }

    fn z(pid: i32, ppid: i32, session: i32) -> (i32, Stat) {
        (pid, Stat { state: 'Z', ppid, session })
    }

    #[test]
    fn tree_includes_grandchildren_and_session_strays_but_not_setsid_leavers() {
        let procs = vec![
            p(1, 0, 1),
            p(100, 50, 100),  // the pane's shell (session leader)
            p(101, 100, 100), // sh -c
            p(102, 101, 100), // python (grandchild)
            p(103, 102, 100), // great-grandchild
            p(110, 100, 110), // `setsid prog` started from the shell: still in the tree
            p(120, 1, 100),   // double-forked daemon: re-parented to init, same session
            p(130, 1, 130),   // double-fork + setsid: gone from the pane
            p(200, 50, 200),  // another pane's shell
            p(201, 200, 200), // its child
            z(104, 100, 100), // zombie child
        ];
        let got = members(Root { pid: 100, tree: true }, &procs);
        assert_eq!(got, vec![(100, 0), (101, 1), (110, 1), (102, 2), (103, 3), (120, SESSION_ONLY_DEPTH)]);
        let other = members(Root { pid: 200, tree: true }, &procs);
        assert_eq!(other, vec![(200, 0), (201, 1)]);
    }

    #[test]
    fn exited_root_keeps_only_session_members() {
        // The shell was reaped (pid 100 gone or reused); its session lingers.
        let procs = vec![p(1, 0, 1), p(101, 1, 100), p(102, 101, 100), p(100, 7, 100)];
        assert_eq!(
            members(Root { pid: 100, tree: false }, &procs),
            vec![(100, SESSION_ONLY_DEPTH), (101, SESSION_ONLY_DEPTH), (102, SESSION_ONLY_DEPTH)]
        );
        // A reused pid 100 in another session is not the pane.
        let reused = vec![p(1, 0, 1), p(100, 1, 900), p(101, 100, 900)];
        assert_eq!(members(Root { pid: 100, tree: false }, &reused), vec![]);
    }

    #[test]
    fn missing_root_and_ppid_cycles_terminate() {
        assert_eq!(members(Root { pid: 5, tree: true }, &[p(1, 0, 1)]), vec![]);
        // A (racy snapshot) cycle must not loop.
        let cyc = vec![p(10, 11, 10), p(11, 10, 10)];
        assert_eq!(members(Root { pid: 10, tree: true }, &cyc), vec![(10, 0), (11, 1)]);
    }
}
