# Porthole shell integration for bash (DESIGN §13): OSC 7 (working directory) and OSC 133
# (A prompt, B command line, C output with kitty's cmdline_url, D end with exit status).
# Sourced after the user's own files; adds hooks, replaces nothing. A prompt that already
# emits OSC 133 (VS Code's script, a hand-made PS1) or OSC 7 keeps its own marks.
if [[ $- == *i* && -z ${__porthole_si-} ]]; then
__porthole_si=1
# 0: no command ran since the last prompt; 1: one is running (PS0 sets it in this shell).
__porthole_ran=0
__porthole_nil=()

# Percent-encodes $1 (RFC 3986 unreserved characters and / stay) into __porthole_enc.
__porthole_encode() {
  local LC_ALL=C s=$1 c i
  __porthole_enc=
  for (( i = 0; i < ${#s}; i++ )); do
    c=${s:i:1}
    case $c in
      [a-zA-Z0-9/._~-]) __porthole_enc+=$c ;;
      *) printf -v c '%%%02X' "'$c"; __porthole_enc+=${c: -3} ;;
    esac
  done
}

# Prints ";cmdline_url=…" for the command about to run (PS0 runs it in a subshell): the
# newest history entry, if it is this command's (a command kept out of history, by
# HISTCONTROL or `set +o history`, sends none rather than the one before).
__porthole_cmdline() {
  local line n
  line=$(HISTTIMEFORMAT= builtin history 1 2>/dev/null) || return
  line=${line#"${line%%[0-9]*}"}
  n=${line%%[!0-9]*}
  [[ -n $n && $n == "$__porthole_hist" ]] || return
  line=${line#"$n"}
  line=${line#"${line%%[! ]*}"}
  __porthole_encode "$line"
  printf ';cmdline_url=%s' "$__porthole_enc"
}

# True if and only if the user's prompt machinery emits OSC $1 (133 or 7) on its own, given
# $2, the prompt as drawn: PS1 is judged by what it emits, not by its text, so marks printed
# by a function it calls count (issue 22 item 2b: `PS1='\[$(__m A)\]…'` got a second set).
__porthole_theirs() {
  [[ $2 == *$'\e]'"$1;"* || $PS0 == *"]$1;"* || ${PROMPT_COMMAND[*]-} == *"]$1;"* ]] && return 0
  [[ $1 == 133 ]] && declare -F __vsc_prompt_cmd >/dev/null
}

# Decided at the first prompt, once the user's files have run: whose marks these are.
__porthole_own133=
__porthole_own7=

# First in PROMPT_COMMAND: the previous command's status before anything else changes $?.
__porthole_prompt_begin() {
  local status=$?
  if [[ $__porthole_ran == 1 && $__porthole_own133 == 1 ]]; then
    printf '\e]133;D;%s\a' "$status"
  fi
  __porthole_ran=0
  return $status
}

# Last in PROMPT_COMMAND: the working directory, and the prompt marks around PS1 (re-applied
# when missing: prompt frameworks rebuild PS1 in their own PROMPT_COMMAND).
__porthole_prompt_end() {
  local status=$?
  if [[ -z $__porthole_own133 ]]; then
    # Expanded once, as drawing it does (its command substitutions run).
    local shown=${PS1@P}
    if __porthole_theirs 133 "$shown"; then __porthole_own133=0; else __porthole_own133=1; fi
    if __porthole_theirs 7 "$shown"; then __porthole_own7=0; else __porthole_own7=1; fi
  fi
  if [[ $__porthole_own7 == 1 ]]; then
    __porthole_encode "$PWD"
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$__porthole_enc"
  fi
  if [[ $__porthole_own133 == 1 ]]; then
    [[ $PS1 == *'\[\e]133;A\a\]'* ]] || PS1='\[\e]133;A\a\]'$PS1'\[\e]133;B\a\]'
    [[ $PS0 == *'__porthole_ran=1'* ]] || PS0='${__porthole_nil[__porthole_ran=1]}\e]133;C$(__porthole_cmdline)\a'$PS0
  fi
  __porthole_hist=$HISTCMD
  return $status
}

if [[ $(declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
  PROMPT_COMMAND=(__porthole_prompt_begin "${PROMPT_COMMAND[@]}" __porthole_prompt_end)
else
  PROMPT_COMMAND=$'__porthole_prompt_begin\n'"${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}"__porthole_prompt_end
fi
fi
