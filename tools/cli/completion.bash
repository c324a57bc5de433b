# SPDX-License-Identifier: Apache-2.0
# Bash completion for commitlog and commitlog-kv: subcommands, flags, and the
# values of a flag whose --help lists them (--format TEXT:{text,json,yaml}).
# Everything is read from the program's own --help when completing, so it
# follows the installed version. Installed as
# /usr/share/bash-completion/completions/commitlog (and commitlog-kv).

# Prints the words that complete the command line COMP_WORDS[0..COMP_CWORD].
_commitlog_candidates() {
  local IFS=$' \t\n' program=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev= subcommand= i help
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  if [[ ${program##*/} == commitlog ]]; then
    for ((i = 1; i < COMP_CWORD; i++)); do
      [[ ${COMP_WORDS[i]} != -* ]] && { subcommand=${COMP_WORDS[i]}; break; }
    done
  fi
  help=$("$program" ${subcommand:+"$subcommand"} --help 2> /dev/null) || return 0
  if [[ $prev == --* && $cur != -* ]]; then
    # "  --format TEXT:{text,json,yaml}=text": the values in braces.
    local line
    line=$(grep -E -m1 "^ +(-[a-zA-Z],)?$prev [A-Z]" <<< "$help") || line=
    if [[ $line =~ :\{([^}]*)\} ]]; then
      compgen -W "${BASH_REMATCH[1]//,/ }" -- "$cur"
      return 0
    fi
    [[ -n $line ]] && { compgen -f -- "$cur"; return 0; }
  fi
  if [[ $cur == -* ]]; then
    compgen -W "$(sed -n 's/^  \(-[^ ]*\).*/\1/p' <<< "$help" | tr ',' ' ')" -- "$cur"
  elif [[ ${program##*/} == commitlog && -z $subcommand ]]; then
    compgen -W "$(sed -n '/^Subcommands:/,/^$/s/^  \([a-z][-a-z]*\) .*/\1/p' <<< "$help")" -- "$cur"
  else
    compgen -f -- "$cur"
  fi
}

_commitlog() {
  local IFS=$'\n'
  COMPREPLY=($(_commitlog_candidates))
}
complete -o filenames -F _commitlog commitlog commitlog-kv
