# fish completion for proctorctl. The candidates come from proctorctl itself
# (`proctorctl __complete INDEX WORD...`), so they follow its command table: commands,
# options, policy actions, event kinds, and app ids when proctord answers.

function __proctorctl_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l lines ($words[1] __complete (math (count $words) - 1) $words[2..-1] $current 2>/dev/null)
    switch "$lines[1]"
        case files
            __fish_complete_path $current
        case words
            printf '%s\n' $lines[2..-1]
    end
end

complete -c proctorctl -f -a '(__proctorctl_complete)'
