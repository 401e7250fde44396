# cxlsim-completion.bash - bash completion for the cxlsim command (installed as
# share/bash-completion/completions/cxlsim). Commands and options are read from `cxlsim help` and preset
# names from `cxlsim presets KIND`, so the completion follows the binary it completes.
_cxlsim_help() {
  "${COMP_WORDS[0]}" help 2>/dev/null
}

_cxlsim() {
  local cur prev cmd words
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  cmd=${COMP_WORDS[1]:-}
  if [ "$COMP_CWORD" -eq 1 ]; then
    words=$(_cxlsim_help | sed -n 's/^  \([a-z][a-z-]*\)[ ].*/\1/p' | sort -u)
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  case "$prev" in
    --json|--csv|--trace|--trace-fst|--out|--op-times|--xclbin|--jsonl|--save-trace)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --backend)
      COMPREPLY=($(compgen -W "csim analytical verilator xrt" -- "$cur")); return ;;
    --reference)
      COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" presets devices 2>/dev/null | awk '{print $1}')" -- "$cur"))
      return ;;
  esac
  if [[ "$cur" == -* ]]; then
    # the options listed under this command in `cxlsim help`, and --set
    words=$(_cxlsim_help | awk -v c="$cmd" '
      /^  [a-z]/ { on = ($1 == c) } on && /^      -/ { for (i = 1; i <= NF; i++) if ($i ~ /^--?[a-z]/) { sub(/,$/, "", $i); print $i } }' | sort -u)
    COMPREPLY=($(compgen -W "$words --set" -- "$cur"))
    return
  fi
  local kind=
  case "$cmd" in
    probe|check|compare) kind=devices ;;
    train|memory|ops) kind=experiments ;;
    presets) [ "$COMP_CWORD" -eq 2 ] && { COMPREPLY=($(compgen -W "devices models gpus clusters experiments show" -- "$cur")); return; } ;;
  esac
  if [ -n "$kind" ]; then
    COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" presets "$kind" 2>/dev/null | awk '{print $1}')" -- "$cur")
               $(compgen -f -X '!*.yaml' -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _cxlsim cxlsim
