# Porthole: the user's .zprofile, then back to Porthole's ZDOTDIR (see .zshenv).
__porthole_zdot=$ZDOTDIR
ZDOTDIR=$PORTHOLE_USER_ZDOTDIR
[[ -r $ZDOTDIR/.zprofile ]] && builtin source "$ZDOTDIR/.zprofile"
PORTHOLE_USER_ZDOTDIR=$ZDOTDIR
ZDOTDIR=$__porthole_zdot
unset __porthole_zdot
