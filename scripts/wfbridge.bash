# wfbridge.bash — bash completion for wfbridge: verbs, then each verb's options, read from
# `wfbridge VERB --help` when asked (so they follow the installed program), and file names.
# Installed as share/bash-completion/completions/wfbridge.

_wfbridge()
{
    local cur prev verb
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    verb=${COMP_WORDS[1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        local verbs
        verbs=$("${COMP_WORDS[0]}" --help 2>/dev/null |
                awk '/^verbs:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
        COMPREPLY=($(compgen -W "$verbs help --help --version" -- "$cur"))
        return
    fi
    case $prev in
    --durability) COMPREPLY=($(compgen -W "full normal" -- "$cur")); return ;;
    --status)
        COMPREPLY=($(compgen -W "Created Executing Idle Closed Faulted Canceled Terminated Suspended" -- "$cur"))
        return ;;
    --lib-path|--keep|--sidecars|--scaffold|-o) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("${COMP_WORDS[0]}" "$verb" --help 2>/dev/null |
               grep -o -- '--[a-z][a-z-]*' | sort -u)
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _wfbridge wfbridge
