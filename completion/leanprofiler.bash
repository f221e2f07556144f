# bash completion for leanprofiler                               -*- shell-script -*-
# SPDX-License-Identifier: MIT
# Installed as share/bash-completion/completions/leanprofiler; uses bash-completion's helpers.
# Commands and options come from the --help of the leanprofiler being completed, preset names
# from its `list --presets`, probe names for --span from its `list` of the recording's
# target: nothing here goes stale when the program changes.

# The commands: the lines under "Commands:" of `leanprofiler --help`.
_leanprofiler_commands()
{
    "$1" --help 2>/dev/null | awk '
        /^Commands:/ { in_list = 1; next }
        in_list && /^$/ { exit }
        in_list && $1 ~ /^[a-z][a-z0-9-]*$/ { print $1 }'
}

# The options of a command, one per line, "-o ARG" when it takes a value: from the option
# column of `leanprofiler CMD --help` (argp's "  -o, --output=DIR   Write ...").
_leanprofiler_options()
{
    "$1" "$2" --help 2>/dev/null | awk '
        # Option lines are indented 2 or 6; descriptions that wrap, 29.
        match($0, /^ +-/) && RLENGTH <= 7 {
            n = 0; arg = ""
            for (i = 1; i <= NF; i++) {
                t = $i
                if (t ~ /^--[[:alnum:]][[:alnum:]-]*(\[?=.*)?$/) {
                    if (t ~ /=/) arg = " ARG"
                    sub(/\[?=.*/, "", t)
                } else if (t ~ /^-[^-],?$/) {
                    sub(/,$/, "", t)
                } else {
                    break
                }
                opt[n++] = t
            }
            for (i = 0; i < n; i++) print opt[i] arg
        }'
}

# The preset names of record --preset: the "NAME: what it profiles" lines of list --presets.
_leanprofiler_presets()
{
    "$1" list --presets 2>/dev/null | sed -n 's/^\([[:alnum:]_-]\{1,\}\): .*/\1/p'
}

# The probes ("provider:name") of the target the command line names, for record --span:
# the COMMAND (after "--" or the first word that is no option), --all-processes BINARY,
# or -p PID. Reads words[], the line reassembled at ":" and "=".
_leanprofiler_probes()
{
    local bin=$1 opts=$2 i w target="" pid=""
    for ((i = cmdi + 1; i < ${#words[@]}; i++)); do
        w=${words[i]}
        [[ $i -eq $cword ]] && continue
        case $w in
            --) target=${words[i + 1]-}; break ;;
            --all-processes=*) target=${w#*=} ;;
            --all-processes) target=${words[i + 1]-}; ((i++)) ;;
            --pid=*) pid=${w#*=} ;;
            -p | --pid) pid=${words[i + 1]-}; ((i++)) ;;
            -p[0-9]*) pid=${w#-p} ;;
            --*=*) ;;
            -*) [[ $'\n'$opts$'\n' == *$'\n'"$w ARG"$'\n'* ]] && ((i++)) ;;
            *) target=$w; break ;;
        esac
    done
    if [[ -n $pid ]]; then
        "$bin" list -p "$pid" 2>/dev/null
    elif [[ -n $target ]]; then
        __expand_tilde_by_ref target
        [[ $target == */* ]] || target=$(type -P -- "$target") || return
        "$bin" list "$target" 2>/dev/null
    fi | awk '$1 ~ /^[^:]+:[^:]+$/ { print $1 }' | sort -u
}

# COMP_WORDS' index of words[K]: words joins COMP_WORDS' pieces at ":" and "=".
_leanprofiler_comp_index()
{
    local k=$1 i j=0 joined
    for ((i = 0; i < k; i++)); do
        joined=""
        while [[ $joined != "${words[i]}" && $j -lt ${#COMP_WORDS[@]} ]]; do
            joined+=${COMP_WORDS[j]}
            ((j++))
        done
    done
    echo "$j"
}

# --span 'PROVIDER:ENTRY,PROVIDER:EXIT[,...]': the entry probe, then the exit probe.
_leanprofiler_span()
{
    local probes entry
    probes=$(_leanprofiler_probes "$1" "$2")
    if [[ $cur != *,* ]]; then
        # The spec goes on with the exit probe.
        COMPREPLY=($(compgen -S , -W "$probes" -- "$cur"))
        compopt -o nospace
    elif [[ $cur != *,*,* ]]; then
        entry=${cur%%,*}
        COMPREPLY=($(compgen -P "$entry," -W "$probes" -- "${cur#*,}"))
    fi
    __ltrim_colon_completions "$cur"
}

_leanprofiler()
{
    local cur prev words cword split
    _init_completion -s -n : || return

    local bin=${words[0]} cmd="" cmdi=0 i
    __expand_tilde_by_ref bin
    for ((i = 1; i < cword; i++)); do
        if [[ ${words[i]} != -* ]]; then
            cmd=${words[i]} cmdi=$i
            break
        fi
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '--help --version' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_leanprofiler_commands "$bin")" -- "$cur"))
        fi
        return
    fi

    local opts
    opts=$(_leanprofiler_options "$bin" "$cmd")
    # record's COMMAND, after "--" or as the first word that is no option nor an option's
    # value: completed as that command's own line.
    if [[ $cmd == record ]]; then
        for ((i = cmdi + 1; i < cword; i++)); do
            case ${words[i]} in
                --)
                    _command_offset "$(_leanprofiler_comp_index $((i + 1)))"
                    return
                    ;;
                --*=*) ;;
                -*) [[ $'\n'$opts$'\n' == *$'\n'"${words[i]} ARG"$'\n'* ]] && ((i++)) ;;
                *)
                    _command_offset "$(_leanprofiler_comp_index "$i")"
                    return
                    ;;
            esac
        done
    fi

    if [[ $'\n'$opts$'\n' == *$'\n'"$prev ARG"$'\n'* ]]; then
        case $prev in
            --preset) COMPREPLY=($(compgen -W "$(_leanprofiler_presets "$bin")" -- "$cur")) ;;
            --span) _leanprofiler_span "$bin" "$opts" ;;
            -p | --pid) _pids ;;
            -o | --output | --svg) _filedir -d ;;
            --all-processes | --html) _filedir ;;
        esac
        # Other values (sizes, counts, durations) have nothing to complete.
        return
    fi
    $split && return

    if [[ $cur == -* ]]; then
        # Long options that take a value end in "=", and the value follows it.
        COMPREPLY=($(compgen -W "$(awk '{ print $1 ($2 == "ARG" && $1 ~ /^--/ ? "=" : "") }' <<<"$opts")" -- "$cur"))
        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
        return
    fi
    case $cmd in
        record) _command_offset "$(_leanprofiler_comp_index "$cword")" ;;
        *) _filedir ;;
    esac
} &&
    complete -F _leanprofiler leanprofiler
