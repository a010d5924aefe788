// `hearth completion bash|zsh|fish`: a completion script for the shell, made from the command
// list in help.ts, so a new command, or a new word after one, completes as soon as it has a usage line.
import { COMMANDS, subcommandsOf } from "./help.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export function completionScript(shell: Shell): string {
  const commands = [...COMMANDS, "help"];
  const subs = COMMANDS.map((c) => [c, subcommandsOf(c)] as const).filter(([, w]) => w.length > 0);
  switch (shell) {
    case "bash":
      return `# hearth completion for bash: add to ~/.bashrc:  source <(hearth completion bash)
_hearth() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${commands.join(" ")}" -- "$cur") )
  elif [ "$COMP_CWORD" -eq 2 ]; then
    case "\${COMP_WORDS[1]}" in
${subs.map(([c, w]) => `      ${c}) COMPREPLY=( $(compgen -W "${w.join(" ")}" -- "$cur") ) ;;`).join("\n")}
      help) COMPREPLY=( $(compgen -W "${COMMANDS.join(" ")}" -- "$cur") ) ;;
      *) COMPREPLY=() ;;
    esac
  fi
}
complete -o default -F _hearth hearth
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
compdef _hearth hearth
`;
    case "fish":
      return `# hearth completion for fish: hearth completion fish > ~/.config/fish/completions/hearth.fish
complete -c hearth -f -n __fish_use_subcommand -a "${commands.join(" ")}"
${subs.map(([c, w]) => `complete -c hearth -f -n "__fish_seen_subcommand_from ${c}" -a "${w.join(" ")}"`).join("\n")}
complete -c hearth -f -n "__fish_seen_subcommand_from help" -a "${COMMANDS.join(" ")}"
`;
  }
}
