#!/bin/sh
# A test remote for trying remote workspaces (protocol §11), as sidecar/tests/common/sshd.rs
# makes one: OpenSSH's sshd in private network and UTS namespaces (hostname
# porthole-remote-test), generated host and user keys, the remote side's XDG directories in a
# temp dir, and its HOME too (so no real ~/.bashrc runs there). Prints an ssh config to use with `-F` (or `porthole-sidecar --ssh-config`, or
# $PORTHOLE_SSH_CONFIG), and stops on Ctrl-C.
#
# Needs root and Debian's openssh-server, openssh-client, socat, util-linux, iproute2.
# Usage: sudo scripts/test-sshd.sh [PORT]      (default 2222; the namespace is private)
set -eu
PORT=${1:-2222}
[ "$(id -u)" = 0 ] || { echo "test-sshd.sh: run as root (it makes network namespaces)" >&2; exit 1; }
DIR=$(mktemp -d /tmp/porthole-test-sshd.XXXXXX)
HOLDER=
SSHD=
cleanup() {
    trap - EXIT INT TERM
    # The daemon (if one was started), then everything in the namespace, then the holder.
    if [ -f "$DIR/run/porthole-remote/daemon.pid" ]; then
        kill -TERM "$(cat "$DIR/run/porthole-remote/daemon.pid")" 2>/dev/null || true
        sleep 1
    fi
    [ -n "$SSHD" ] && kill "$SSHD" 2>/dev/null || true
    if [ -n "$HOLDER" ]; then
        NS=$(readlink "/proc/$HOLDER/ns/net" || true)
        for p in /proc/[0-9]*; do
            pid=${p#/proc/}
            [ "$pid" = "$HOLDER" ] && continue
            [ "$(readlink "$p/ns/net" 2>/dev/null)" = "$NS" ] && kill -KILL "$pid" 2>/dev/null || true
        done
        kill "$HOLDER" 2>/dev/null || true
    fi
    rm -rf "$DIR"
    echo "test-sshd.sh: stopped" >&2
}
trap cleanup EXIT INT TERM
mkdir -p "$DIR/run" "$DIR/state" "$DIR/config" "$DIR/data" "$DIR/home" /run/sshd
ssh-keygen -q -t ed25519 -N '' -C host -f "$DIR/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -C user -f "$DIR/user_ed25519"
unshare --net --uts sh -c 'hostname porthole-remote-test && ip link set lo up && exec sleep infinity' </dev/null &
HOLDER=$!
i=0
until [ "$(cat /proc/$HOLDER/comm 2>/dev/null)" = sleep ]; do
    i=$((i + 1)); [ $i -lt 500 ] || { echo "the namespace holder did not start" >&2; exit 1; }; sleep 0.02
done
cat >"$DIR/sshd_config" <<CFG
Port $PORT
ListenAddress 127.0.0.1
HostKey $DIR/host_ed25519
AuthorizedKeysFile $DIR/user_ed25519.pub
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PidFile $DIR/sshd.pid
SetEnv HOME=$DIR/home XDG_RUNTIME_DIR=$DIR/run XDG_STATE_HOME=$DIR/state XDG_CONFIG_HOME=$DIR/config XDG_DATA_HOME=$DIR/data
LogLevel ERROR
CFG
nsenter --net=/proc/$HOLDER/ns/net --uts=/proc/$HOLDER/ns/uts /usr/sbin/sshd -D -e -f "$DIR/sshd_config" </dev/null &
SSHD=$!
echo "porthole-test $(cut -d' ' -f1,2 "$DIR/host_ed25519.pub")" >"$DIR/known_hosts"
cat >"$DIR/ssh_config" <<CFG
Host porthole-test
  HostName 127.0.0.1
  Port $PORT
  User root
  IdentityFile $DIR/user_ed25519
  IdentitiesOnly yes
  HostKeyAlias porthole-test
  UserKnownHostsFile $DIR/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR
  ProxyCommand nsenter --net=/proc/$HOLDER/ns/net socat STDIO TCP:127.0.0.1:$PORT
CFG
echo "test-sshd.sh: sshd runs in a private network namespace; its ssh config is $DIR/ssh_config:" >&2
echo >&2
cat "$DIR/ssh_config"
echo >&2
echo "Try: ssh -F $DIR/ssh_config porthole-test hostname" >&2
echo "Porthole: PORTHOLE_SSH_CONFIG=$DIR/ssh_config cargo xtask run --web   (in another terminal)" >&2
echo "          then click ⇄ beside the workspace strip's + and connect to porthole-test" >&2
echo "          (Porthole installs its porthole-sidecar there the first time).  Ctrl-C stops it." >&2
wait "$SSHD"
