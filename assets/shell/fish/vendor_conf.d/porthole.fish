# Porthole shell integration for fish (DESIGN §13): OSC 7 (working directory) and OSC 133
# (A prompt, B command line, C output with kitty's cmdline_url, D end with exit status), and
# Porthole's PATH entry (protocol §9.1). fish reads this vendor file before the user's
# config.fish, so the prompt is wrapped at the first prompt, once the user's is defined.
if status is-interactive; and not set -q __porthole_si
    set -g __porthole_si 1
    if set -q PORTHOLE_BIN_DIR; and test -n "$PORTHOLE_BIN_DIR"; and test "$PATH[1]" != "$PORTHOLE_BIN_DIR"
        set -gx PATH $PORTHOLE_BIN_DIR $PATH
    end
    if test "$PORTHOLE_SHELL_INTEGRATION" != 0
        set -g __porthole_ran 0
        # Decided at the first prompt, once config.fish has run: 0 when the user's prompt
        # emits OSC 133 on its own (then its marks are the only ones).
        set -g __porthole_own133 1

        function __porthole_preexec --on-event fish_preexec
            test $__porthole_own133 = 1; or return
            printf '\e]133;C;cmdline_url=%s\a' (string escape --style=url -- "$argv")
            set -g __porthole_ran 1
        end

        function __porthole_postexec --on-event fish_postexec
            set -l st $status
            if test $__porthole_ran = 1
                printf '\e]133;D;%s\a' $st
            end
            set -g __porthole_ran 0
        end

        function __porthole_cwd --on-event fish_prompt
            printf '\e]7;file://%s%s\a' (prompt_hostname) (string escape --style=url -- $PWD)
        end

        function __porthole_wrap_prompt --on-event fish_prompt
            functions -e __porthole_wrap_prompt
            if functions fish_prompt 2>/dev/null | string match -q -- '*133;*'
                set -g __porthole_own133 0
                return
            end
            if functions -q fish_prompt
                functions -c fish_prompt __porthole_user_prompt
            else
                function __porthole_user_prompt
                    printf '> '
                end
            end
            function fish_prompt
                printf '\e]133;A\a'
                __porthole_user_prompt
                printf '\e]133;B\a'
            end
        end
    end
end
