# Porthole: the user's .zshrc, then Porthole's PATH entry (protocol §9.1) and shell
# integration (protocol §5.3). ZDOTDIR stays the user's from here on.
__porthole_zdot=$ZDOTDIR
ZDOTDIR=$PORTHOLE_USER_ZDOTDIR
unset PORTHOLE_USER_ZDOTDIR
[[ -r $ZDOTDIR/.zshrc ]] && builtin source "$ZDOTDIR/.zshrc"
if [[ -n ${PORTHOLE_BIN_DIR-} && $PATH != "$PORTHOLE_BIN_DIR":* ]]; then
  export PATH="$PORTHOLE_BIN_DIR:$PATH"
fi
if [[ ${PORTHOLE_SHELL_INTEGRATION:-1} != 0 && -r $__porthole_zdot/porthole.zsh ]]; then
  builtin source "$__porthole_zdot/porthole.zsh"
fi
unset __porthole_zdot
if [[ $ZDOTDIR == "$HOME" ]]; then unset ZDOTDIR; fi
