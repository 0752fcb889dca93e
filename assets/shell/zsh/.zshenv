# Porthole: zsh starts with ZDOTDIR pointing here. Each file runs the user's own file of the
# same name from their ZDOTDIR (PORTHOLE_USER_ZDOTDIR, else $HOME), then comes back here.
# .zshrc ends the detour: shell integration is added and ZDOTDIR stays the user's (their
# .zlogin is then read directly).
__porthole_zdot=$ZDOTDIR
ZDOTDIR=${PORTHOLE_USER_ZDOTDIR:-$HOME}
[[ -r $ZDOTDIR/.zshenv ]] && builtin source "$ZDOTDIR/.zshenv"
if [[ -o interactive ]]; then
  # The user's .zshenv may have moved ZDOTDIR: remember where their other files are.
  PORTHOLE_USER_ZDOTDIR=$ZDOTDIR
  ZDOTDIR=$__porthole_zdot
else
  unset PORTHOLE_USER_ZDOTDIR
fi
unset __porthole_zdot
