// `hearth completion bash|zsh|fish`: a completion script for the shell, made from the command
// list in help.ts, so a new command, or a new word after one, completes as soon as it has a usage line.
// It completes `npx hearth …` too, the way the README runs Hearth before any `npm link`.
import { COMMANDS, subcommandsOf } from "./help.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export function completionScript(shell: Shell): string {
  const commands = [...COMMANDS, "help"];
  const subs = COMMANDS.map((c) => [c, subcommandsOf(c)] as const).filter(([, w]) => w.length > 0);
  switch (shell) {
    case "bash":
      return `# hearth completion for bash: add to ~/.bashrc:  source <(hearth completion bash)
# It completes \`hearth …\` and \`npx hearth …\`.
_hearth() {
  local at=0
  [ "\${COMP_WORDS[0]}" = npx ] && at=1
  local cur=\${COMP_WORDS[COMP_CWORD]} n=$((COMP_CWORD - at))
  if [ "$n" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${commands.join(" ")}" -- "$cur") )
  elif [ "$n" -eq 2 ]; then
    case "\${COMP_WORDS[at+1]}" in
${subs.map(([c, w]) => `      ${c}) COMPREPLY=( $(compgen -W "${w.join(" ")}" -- "$cur") ) ;;`).join("\n")}
      help) COMPREPLY=( $(compgen -W "${COMMANDS.join(" ")}" -- "$cur") ) ;;
      *) COMPREPLY=() ;;
    esac
  fi
}
_hearth_npx() {
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "hearth" -- "\${COMP_WORDS[1]}") )
  elif [ "\${COMP_WORDS[1]}" = hearth ]; then
    _hearth
  else
    COMPREPLY=()
  fi
}
complete -o default -F _hearth hearth
complete -o default -F _hearth_npx npx
`;
    case "zsh":
      return `#compdef hearth
# hearth completion for zsh: add to ~/.zshrc:  source <(hearth completion zsh)
_hearth() {
  if (( CURRENT == 2 )); then
    compadd -- ${commands.join(" ")}
  elif (( CURRENT == 3 )); then
    case $words[2] in
${subs.map(([c, w]) => `      ${c}) compadd -- ${w.join(" ")} ;;`).join("\n")}
      help) compadd -- ${COMMANDS.join(" ")} ;;
      *) _files ;;
    esac
  else
    _files
  fi
}
_hearth_npx() {
  if (( CURRENT == 2 )); then
    compadd -- hearth
  elif [[ $words[2] == hearth ]]; then
    shift words
    (( CURRENT-- ))
    _hearth
  else
    _files
  fi
}
compdef _hearth hearth
compdef _hearth_npx npx
`;
    case "fish":
      return `# hearth completion for fish: hearth completion fish > ~/.config/fish/completions/hearth.fish
complete -c hearth -f -n __fish_use_subcommand -a "${commands.join(" ")}"
${subs.map(([c, w]) => `complete -c hearth -f -n "__fish_seen_subcommand_from ${c}" -a "${w.join(" ")}"`).join("\n")}
complete -c hearth -f -n "__fish_seen_subcommand_from help" -a "${COMMANDS.join(" ")}"
complete -c npx -f -n __fish_use_subcommand -a hearth
complete -c npx -f -n "__fish_seen_subcommand_from hearth; and not __fish_seen_subcommand_from ${commands.join(" ")}" -a "${commands.join(" ")}"
${subs.map(([c, w]) => `complete -c npx -f -n "__fish_seen_subcommand_from hearth; and __fish_seen_subcommand_from ${c}" -a "${w.join(" ")}"`).join("\n")}
`;
  }
}
