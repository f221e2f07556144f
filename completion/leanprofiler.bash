# bash completion for leanprofiler                               -*- shell-script -*-
# SPDX-License-Identifier: MIT
# Installed as share/bash-completion/completions/leanprofiler; uses bash-completion's helpers.
# Commands and options come from the --help of the leanprofiler being completed, preset names
# from its `list --presets`, probe names for --span from its `list` of the recording's
# target: nothing here goes stale when the program changes.
#
# Those words come from programs, and probe names from any ELF file a user may write: they
# never go through compgen -W (which expands $(...), `...` and ${...} in them, running
# commands as the completing user); _leanprofiler_reply compares them as plain strings, and
# keeps only words of the characters their kind may have.

# COMPREPLY: PREFIX WORD SUFFIX for each line WORD of stdin that begins with CUR (a plain
# string comparison: no pattern, no expansion) and is made of the characters of the bracket
# expression CHARS only; each once, in order.
_leanprofiler_reply()
{
    local prefix=$1 suffix=$2 cur=$3 chars=$4 w LC_ALL=C
    local -A seen=()
    COMPREPLY=()
    while IFS= read -r w; do
        [[ -n $w && $w != *[!$chars]* && ${w:0:${#cur}} == "$cur" && -z ${seen[$w]-} ]] ||
            continue
        seen[$w]=1
        COMPREPLY+=("$prefix$w$suffix")
    done
}

# The commands: the lines under "Commands:" of `leanprofiler --help`.
_leanprofiler_commands()
{
    "$1" --help 2>/dev/null | awk '
        /^Commands:/ { in_list = 1; next }
        in_list && /^$/ { exit }
        in_list && $1 ~ /^[a-z][a-z0-9-]*$/ { print $1 }'
}

# The options of a command, one per line, "-o ARG" when it takes a value: from the option
# column of `leanprofiler CMD --help` (argp's "  -o, --output=DIR   Write ..."). On an
# option line the options are followed by the end of the line or by their description at
# argp's column 29 (ARGP_HELP_FMT unset): an example line ("      --span 'python:...'") is
# not one.
_leanprofiler_options()
{
    env -u ARGP_HELP_FMT "$1" "$2" --help 2>/dev/null | awk '
        match($0, /^ +(-[^- ], )*(-[^- ]|--[[:alnum:]][[:alnum:]-]*(\[?=[^ ]*)?)/) {
            end = RLENGTH
            rest = substr($0, end + 1)
            if (rest != "" && !(match(rest, /^ +[^ ]/) && end + RLENGTH - 1 == 29)) next
            n = 0; arg = ""
            nt = split(substr($0, 1, end), tok, /[ ,]+/)
            for (k = 1; k <= nt; k++) {
                t = tok[k]
                if (t == "") continue
                if (t ~ /=/) arg = " ARG"
                sub(/\[?=.*/, "", t)
                opt[n++] = t
            }
            for (i = 0; i < n; i++) if (!seen[opt[i]]++) print opt[i] arg
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
    fi | awk '$1 ~ /^[[:alnum:]_.-]+:[[:alnum:]_.-]+$/ { print $1 }' | LC_ALL=C sort -u
}

# The values of CMD's OPTION (report --sort, export --compress), from the command's own error
# for a value it does not know ("invalid --sort '': self, total, calls, mean, p95 or name;
# see ...").
_leanprofiler_choices()
{
    "$1" "$2" "$3" '' 2>&1 >/dev/null |
        sed -n "s/^.*invalid $3 '': \(.*\); see .*$/\1/p" | sed 's/ or /, /' | tr -s ', ' '\n\n'
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

# What a probe ("provider:name") offered for --span may be made of; a name with anything else
# is not offered (type it).
_leanprofiler_probe_chars='a-zA-Z0-9_.:-'

# --span 'PROVIDER:ENTRY,PROVIDER:EXIT[,...]': the entry probe, then the exit probe.
_leanprofiler_span()
{
    local probes entry
    probes=$(_leanprofiler_probes "$1" "$2")
    if [[ $cur != *,* ]]; then
        # The spec goes on with the exit probe.
        _leanprofiler_reply "" , "$cur" "$_leanprofiler_probe_chars" <<<"$probes"
        compopt -o nospace
    elif [[ $cur != *,*,* ]]; then
        entry=${cur%%,*}
        _leanprofiler_reply "$entry," "" "${cur#*,}" "$_leanprofiler_probe_chars" <<<"$probes"
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
            _leanprofiler_reply "" "" "$cur" a-z- <<<$'--help\n--version'
        else
            _leanprofiler_reply "" "" "$cur" a-z0-9- < <(_leanprofiler_commands "$bin")
        fi
        return
    fi

    local opts
    opts=$(_leanprofiler_options "$bin" "$cmd")
    # record's (and top's) COMMAND, after "--" or as the first word that is no option nor an
    # option's value: completed as that command's own line.
    if [[ $cmd == record || $cmd == top ]]; then
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

    # help COMMAND: the commands.
    if [[ $cmd == help ]]; then
        [[ $cword -eq $((cmdi + 1)) ]] &&
            _leanprofiler_reply "" "" "$cur" a-z0-9- < <(_leanprofiler_commands "$bin")
        return
    fi
    if [[ $'\n'$opts$'\n' == *$'\n'"$prev ARG"$'\n'* ]]; then
        case $prev in
            --preset) _leanprofiler_reply "" "" "$cur" a-z0-9_- < <(_leanprofiler_presets "$bin") ;;
            --sort | --compress)
                _leanprofiler_reply "" "" "$cur" a-z0-9_- < <(_leanprofiler_choices "$bin" "$cmd" "$prev")
                ;;
            --format)
                if [[ $cmd == report ]]; then
                    _leanprofiler_reply "" "" "$cur" a-z <<<perfetto
                else
                    _leanprofiler_reply "" "" "$cur" a-z, <<<$'json\nperfetto\njson,perfetto'
                fi
                ;;
            --span) _leanprofiler_span "$bin" "$opts" ;;
            -p | --pid) _pids ;;
            -o | --output | --svg) _filedir -d ;;
            --all-processes | --html) _filedir ;;
        esac
        # Other values (sizes, counts, durations: --window, --keep...) have nothing to complete.
        return
    fi
    $split && return

    if [[ $cur == -* ]]; then
        # Long options that take a value end in "=", and the value follows it.
        _leanprofiler_reply "" "" "$cur" a-zA-Z0-9?=- < <(awk '{ print $1 ($2 == "ARG" && $1 ~ /^--/ ? "=" : "") }' <<<"$opts")
        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
        return
    fi
    case $cmd in
        record | top) _command_offset "$(_leanprofiler_comp_index "$cword")" ;;
        *) _filedir ;;
    esac
} &&
    complete -F _leanprofiler leanprofiler
