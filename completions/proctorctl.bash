# bash completion for proctorctl. The candidates come from proctorctl itself
# (`proctorctl __complete INDEX WORD...`), so they follow its command table: commands,
# options, policy actions, event kinds, and app ids when proctord answers.

_proctorctl() {
    local cur cword
    local -a words lines
    if declare -F _get_comp_words_by_ref >/dev/null; then
        # bash-completion's view of the line keeps "--opt=value" and "a:b" whole.
        _get_comp_words_by_ref -n =: -w words -i cword -c cur
    else
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
        cur=${COMP_WORDS[COMP_CWORD]}
    fi
    COMPREPLY=()
    mapfile -t lines < <("${words[0]}" __complete "$((cword - 1))" "${words[@]:1}" 2>/dev/null)
    case ${lines[0]-} in
        files)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            ;;
        words)
            local line
            for line in "${lines[@]:1}"; do
                COMPREPLY+=("${line%%$'\t'*}")
            done
            ;;
    esac
}

complete -F _proctorctl proctorctl
