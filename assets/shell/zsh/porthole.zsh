# Porthole shell integration for zsh (DESIGN §13): OSC 7 (working directory) and OSC 133
# (A prompt, B command line, C output with kitty's cmdline_url, D end with exit status).
# Adds hooks, replaces nothing. A prompt that already emits OSC 133 or OSC 7 (VS Code's
# script, a theme) keeps its own marks.
if [[ -o interactive && -z ${__porthole_si-} ]]; then
typeset -g __porthole_si=1 __porthole_ran=0 __porthole_own133= __porthole_own7=
autoload -Uz add-zsh-hook

# Percent-encodes $1 (unreserved characters and / stay) into REPLY.
__porthole_encode() {
  emulate -L zsh
  setopt extendedglob
  local LC_ALL=C
  REPLY=${1//(#b)([^A-Za-z0-9\/._~-])/%${(l:2::0:)$(([##16]#match))}}
}

# True if and only if the user's prompt emits OSC $1 (133 or 7) on its own, given $2, the
# prompt as drawn: judged by what it emits, not by its text, so marks printed by a function
# it calls (with prompt_subst) count (issue 22 item 2b).
__porthole_theirs() {
  [[ $2 == *$'\e]'"$1;"* ]] && return 0
  [[ $1 == 133 ]] && (( ${+functions[__vsc_precmd]} ))
}

# First precmd hook: the previous command's status before any other hook changes $?.
__porthole_precmd_begin() {
  local st=$?
  if [[ $__porthole_ran == 1 && $__porthole_own133 == 1 ]]; then
    builtin print -rn -- $'\e]133;D;'"$st"$'\a'
  fi
  __porthole_ran=0
  return $st
}

# Last precmd hook: the working directory, and the prompt marks around PS1 (re-applied when
# a theme rebuilt PS1).
__porthole_precmd_end() {
  local st=$? REPLY
  if [[ -z $__porthole_own133 ]]; then
    # Expanded once, as drawing it does (with prompt_subst, its command substitutions run).
    local shown=${(%%)PS1}
    if __porthole_theirs 133 "$shown"; then __porthole_own133=0; else __porthole_own133=1; fi
    if __porthole_theirs 7 "$shown"; then __porthole_own7=0; else __porthole_own7=1; fi
  fi
  if [[ $__porthole_own7 == 1 ]]; then
    __porthole_encode "$PWD"
    builtin print -rn -- $'\e]7;file://'"${HOST-}$REPLY"$'\a'
  fi
  if [[ $__porthole_own133 == 1 && $PS1 != *$'%{\e]133;A\a%}'* ]]; then
    PS1=$'%{\e]133;A\a%}'"$PS1"$'%{\e]133;B\a%}'
  fi
  return $st
}

__porthole_preexec() {
  [[ $__porthole_own133 == 1 ]] || return
  local REPLY
  __porthole_encode "$1"
  builtin print -rn -- $'\e]133;C;cmdline_url='"$REPLY"$'\a'
  __porthole_ran=1
}

precmd_functions=(__porthole_precmd_begin ${precmd_functions[@]} __porthole_precmd_end)
add-zsh-hook preexec __porthole_preexec
fi
