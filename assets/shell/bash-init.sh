# Porthole: what a login bash runs (bash starts with --init-file this), then Porthole's own
# PATH entry (protocol §9.1), then shell integration unless switched off (protocol §5.3).
if [ -r /etc/profile ]; then . /etc/profile; fi
if [ -r "$HOME/.bash_profile" ]; then . "$HOME/.bash_profile"
elif [ -r "$HOME/.bash_login" ]; then . "$HOME/.bash_login"
elif [ -r "$HOME/.profile" ]; then . "$HOME/.profile"
fi
if [ -n "${PORTHOLE_BIN_DIR:-}" ]; then
  case "$PATH" in
    "$PORTHOLE_BIN_DIR":*) ;;
    *) PATH="$PORTHOLE_BIN_DIR:$PATH"; export PATH ;;
  esac
fi
if [ "${PORTHOLE_SHELL_INTEGRATION:-1}" != 0 ] && [ -r "${BASH_SOURCE[0]%/*}/bash-integration.sh" ]; then
  . "${BASH_SOURCE[0]%/*}/bash-integration.sh"
fi
