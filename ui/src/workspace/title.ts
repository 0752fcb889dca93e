// Pure: a terminal's command line as a pane title.

/** A terminal's command line as a pane title: argv[0]'s base name (login `-` dropped) and the arguments; null for none. */
export function commandTitle(command: string[] | undefined): string | null {
  if (!command?.length) return null;
  const argv0 = command[0].replace(/^-/, '').split('/').pop() ?? command[0];
  return [argv0, ...command.slice(1)].join(' ');
}
